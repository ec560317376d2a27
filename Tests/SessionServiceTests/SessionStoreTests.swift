import GeoChatBus
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
        let started = try await store.start(nick: nick, key: "k1")
        let first = started.value
        #expect(started.event?.record.decode(SessionEvent.self) == .started(first), "the change stages its event")
        #expect(first.version == 1 && !first.ended && first.nick == "Rules")
        let again = try await store.start(nick: nick, key: "k1")
        #expect(again.event == nil, "a repeat stages nothing")
        #expect(again.value == first)
        #expect(try await store.find(first.id) == first)
        #expect(try await store.find(.random()) == nil)

        let renamed = try await store.rename(first.id, to: Nickname("Renamed")!)
        #expect(renamed?.value.nick == "Renamed" && renamed?.value.version == 2)
        #expect(renamed?.event?.record.decode(SessionEvent.self) == .renamed(renamed!.value))
        #expect(try await store.rename(.random(), to: nick) == nil)

        let ended = try await store.end(first.id, key: "e1")
        #expect(ended?.value.ended == true && ended?.value.version == 3)
        #expect(ended?.event?.record.decode(SessionEvent.self) == .ended(ended!.value, reason: "end"))
        let repeated = try await store.end(first.id, key: "e1")
        #expect(repeated?.value == ended?.value && repeated?.event == nil, "the same end again answers the same")
        #expect(try await store.end(first.id, key: "e2") == nil, "another end finds nothing")
        #expect(try await store.rename(first.id, to: nick) == nil, "an ended session keeps its name")
        #expect(try await store.find(first.id)?.ended == true)

        let idleStart = try await store.start(nick: nick, key: "k2")
        let idle = idleStart.value
        #expect(try await store.expireIdle(lifetimeSeconds: 3600, limit: 10).isEmpty)
        try await Task.sleep(for: .milliseconds(20))
        let expired = try await store.expireIdle(lifetimeSeconds: 0, limit: 10)
        #expect(expired.map(\.value.id) == [idle.id])
        #expect(expired.first?.value.ended == true && expired.first?.value.version == 2)
        #expect(expired.first?.event?.record.decode(SessionEvent.self) == .ended(expired[0].value, reason: "idle"))
        #expect(try await store.expireIdle(lifetimeSeconds: 0, limit: 10).isEmpty, "ended sessions do not end twice")
        #expect(try await store.end(idle.id, key: "e3") == nil, "an end after an idle end finds nothing")

        // Every staged event is still in the outbox; a relay pass takes them in order.
        let staged = [started.event, renamed?.event, ended?.event, idleStart.event, expired.first?.event].compactMap {
            $0
        }
        #expect(staged.count == 5)
        let relayed = try await OutboxChecks.relayAll(store.outbox)
        #expect(relayed.map(\.seq) == staged.map(\.seq).sorted())
        #expect(try await OutboxChecks.relayAll(store.outbox).isEmpty, "relayed events are gone")
    }
}
