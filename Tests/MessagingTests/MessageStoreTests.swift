import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import Testing

@testable import MessagingService

/// The rules every `MessageStore` keeps, on the PostgreSQL store (test
/// PostgreSQL) and on the in-memory one the handler tests use.
@Suite struct MessageStoreTests {
    @Test func theInMemoryStoreKeepsTheRules() async throws {
        try await Self.checkRules(InMemoryMessageStore())
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func thePostgresStoreKeepsTheRules() async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresMessageStore(database: database)
            try await store.migrate()
            try await Self.checkRules(store)
        }
    }

    static func checkRules(_ store: some MessageStore) async throws {
        let room: RoomID = 5, author = SessionID.random()
        let later = Deadline.after(.seconds(5))
        #expect(try await store.state(of: room) == .unknown)
        #expect(try await store.append(room: room, nick: "a", text: "x", author: nil, key: "k0", commitBy: later) == nil)
        try await store.open(room)
        try await store.open(room)
        #expect(try await store.state(of: room) == .open(head: 0))
        for i in 1...4 {
            let message = try await store.append(room: room, nick: "a", text: "m\(i)", author: author, key: "k\(i)", commitBy: later)
            #expect(message?.id == Int64(i))
        }
        await #expect(throws: DuplicateIdempotencyKey.self) {
            try await store.append(room: room, nick: "a", text: "again", author: nil, key: "k2", commitBy: later)
        }
        #expect(try await store.stored(key: "k2")?.0.text == "m2")
        #expect(try await store.stored(key: "k2")?.author == author)
        await #expect(throws: (any Error).self) {
            try await store.append(room: room, nick: "a", text: "late", author: nil, key: "k9", commitBy: .after(.milliseconds(-1)))
        }
        #expect(try await store.stored(key: "k9") == nil, "a late commit rolls back")
        #expect(try await store.state(of: room) == .open(head: 4))
        #expect(try await store.history(room: room, head: 4, after: 1, limit: 2).map(\.id) == [2, 3])
        #expect(try await store.history(room: room, head: 3, after: nil, limit: 2).map(\.id) == [2, 3], "never past the head")
        #expect(try await store.messageCounts([room, 6]).map(\.messages) == [4, 0])
        #expect(try await store.remove(rooms: [room, 6]) == 4)
        #expect(try await store.state(of: room) == .removed)
        #expect(try await store.state(of: 6) == .removed)
        #expect(try await store.append(room: room, nick: "a", text: "x", author: nil, key: "k10", commitBy: later) == nil)
        try await store.open(room)
        #expect(try await store.state(of: room) == .removed, "a removed log stays removed")
        #expect(try await store.remove(rooms: [room]) == 0)
    }
}
