import GeoChatDomain
import GeoChatTestSupport
import Testing

@testable import SessionService

/// The rules every `SessionStore` keeps, checked on the PostgreSQL store
/// (against the test PostgreSQL) and on the in-memory one the handler tests use.
@Suite struct SessionStoreTests {
    @Test func theInMemoryStoreKeepsTheRules() async throws {
        try await Self.checkRules(InMemorySessionStore())
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func thePostgresStoreKeepsTheRules() async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresSessionStore(database: database)
            try await store.migrate()
            try await Self.checkRules(store)
        }
    }

    static func checkRules(_ store: some SessionStore) async throws {
        let nick = Nickname("Rules")!
        let (first, isNew) = try await store.start(nick: nick, key: "k1")
        #expect(isNew)
        #expect(first.version == 1 && !first.ended && first.nick == "Rules")
        let (again, againNew) = try await store.start(nick: nick, key: "k1")
        #expect(!againNew)
        #expect(again == first)
        #expect(try await store.find(first.id) == first)
        #expect(try await store.find(.random()) == nil)

        let renamed = try await store.rename(first.id, to: Nickname("Renamed")!)
        #expect(renamed?.nick == "Renamed" && renamed?.version == 2)
        #expect(try await store.rename(.random(), to: nick) == nil)

        let ended = try await store.end(first.id, key: "e1")
        #expect(ended?.ended == true && ended?.version == 3)
        #expect(try await store.end(first.id, key: "e1") == ended, "the same end again answers the same")
        #expect(try await store.end(first.id, key: "e2") == nil, "another end finds nothing")
        #expect(try await store.rename(first.id, to: nick) == nil, "an ended session keeps its name")
        #expect(try await store.find(first.id)?.ended == true)

        let (idle, _) = try await store.start(nick: nick, key: "k2")
        #expect(try await store.expireIdle(lifetimeSeconds: 3600, limit: 10).isEmpty)
        try await Task.sleep(for: .milliseconds(20))
        let expired = try await store.expireIdle(lifetimeSeconds: 0, limit: 10)
        #expect(expired.map(\.id) == [idle.id])
        #expect(expired.first?.ended == true && expired.first?.version == 2)
        #expect(try await store.expireIdle(lifetimeSeconds: 0, limit: 10).isEmpty, "ended sessions do not end twice")
    }
}
