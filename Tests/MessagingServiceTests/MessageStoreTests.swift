import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import Synchronization
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
        let room: RoomID = 5
        let author = SessionID.random()
        let later = Deadline.after(.seconds(5))
        #expect(try await store.state(of: room) == .unknown)
        #expect(
            try await store.append(room: room, nick: "a", text: "x", author: nil, key: "k0", commitBy: later) == nil)
        try await store.open(room)
        try await store.open(room)
        #expect(try await store.state(of: room) == .open(head: 0))
        // Many at once (a poll's `created` events), repeats and a known room among them.
        try await store.open([9, room, 8, 9])
        #expect(try await store.state(of: 8) == .open(head: 0))
        #expect(try await store.state(of: 9) == .open(head: 0))
        try await store.open([])
        for i in 1...4 {
            let message = try await store.append(
                room: room, nick: "a", text: "m\(i)", author: author, key: "k\(i)", commitBy: later)
            #expect(
                message
                    == .stored(
                        ChatMessage(
                            room: room, id: MessageID(Int64(i)), nick: "a", text: "m\(i)",
                            addedAt: message?.message.addedAt ?? 0)))
        }
        await #expect(throws: DuplicateIdempotencyKey.self) {
            try await store.append(room: room, nick: "a", text: "again", author: nil, key: "k2", commitBy: later)
        }
        #expect(try await store.stored(key: "k2")?.0.text == "m2")
        #expect(try await store.stored(key: "k2")?.author == author)
        await #expect(throws: (any Error).self) {
            try await store.append(
                room: room, nick: "a", text: "late", author: nil, key: "k9", commitBy: .after(.milliseconds(-1)))
        }
        #expect(try await store.stored(key: "k9") == nil, "a late commit rolls back")
        #expect(try await store.state(of: room) == .open(head: 4))
        #expect(
            try await store.heads([room, 77]) == [RoomHead(room: room, head: 4)], "rooms without a log are left out")
        #expect(
            try await store.history(room: room, head: 4, after: 1, limit: 2, skipRemoved: false).map(\.id) == [2, 3])
        #expect(
            try await store.history(room: room, head: 3, after: nil, limit: 2, skipRemoved: false).map(\.id) == [2, 3],
            "never past the head")
        #expect(try await store.messageCounts([room, 6]).map(\.messages) == [4, 0])
        #expect(try await store.remove(rooms: [room, 6]) == 4)
        #expect(try await store.state(of: room) == .removed)
        #expect(try await store.state(of: 6) == .removed)
        #expect(
            try await store.append(room: room, nick: "a", text: "x", author: nil, key: "k10", commitBy: later) == nil)
        try await store.open(room)
        #expect(try await store.state(of: room) == .removed, "a removed log stays removed")
        #expect(try await store.remove(rooms: [room]) == 0)
        #expect(try await store.heads([room]) == [], "a removed log has no head")
    }

    @Test func theInMemoryStoreKeepsTheRepeatAndOutboxRules() async throws {
        try await Self.checkRepeatsAndOutbox(InMemoryMessageStore())
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func thePostgresStoreKeepsTheRepeatAndOutboxRules() async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresMessageStore(database: database)
            try await store.migrate()
            try await Self.checkRepeatsAndOutbox(store)
        }
    }

    /// A phone's repeat is stored once; every stored message is in the outbox
    /// until announced; the relay publishes by room and id what is older than
    /// its grace, keeps what the broker refused, and drops rows of removed rooms.
    static func checkRepeatsAndOutbox(_ store: some MessageStore) async throws {
        let later = Deadline.after(TestPatience.deadline)
        let ann = SessionID.random()
        let bob = SessionID.random()
        for room: RoomID in [1, 2, 3] { try await store.open(room) }
        let first = try await store.append(room: 1, nick: "Ann", text: "hi", author: ann, key: "r1", commitBy: later)
        guard case .stored(let hi)? = first else {
            Issue.record("not stored: \(String(describing: first))")
            return
        }
        // A new request (new key) with the same session, room, nick and text: the same say.
        let again = try await store.append(room: 1, nick: "Ann", text: "hi", author: ann, key: "r2", commitBy: later)
        #expect(again == .repeated(hi, author: ann))
        #expect(try await store.stored(key: "r2") == nil, "nothing stored for the repeat")
        // Anything else differing is a new message.
        #expect(
            try await store.append(room: 1, nick: "Bob", text: "hi", author: bob, key: "r3", commitBy: later)?.message
                .id == 2)
        #expect(
            try await store.append(room: 1, nick: "Ann", text: "hi!", author: ann, key: "r4", commitBy: later)?.message
                .id == 3)
        #expect(
            try await store.append(room: 2, nick: "Ann", text: "hi", author: ann, key: "r5", commitBy: later)?.message
                .id == 1)
        #expect(
            try await store.append(room: 1, nick: "Ann_2", text: "hi", author: ann, key: "r6", commitBy: later)?.message
                .id == 4)
        // Anonymous lobby posts: the same name and text within the window are one post.
        let jack = try await store.append(room: 3, nick: "jack", text: "yo", author: nil, key: "r7", commitBy: later)
        #expect(
            try await store.append(room: 3, nick: "jack", text: "yo", author: nil, key: "r8", commitBy: later)
                == .repeated(jack!.message, author: nil))
        #expect(
            try await store.append(room: 3, nick: "jill", text: "yo", author: nil, key: "r9", commitBy: later)?.message
                .id == 2)
        #expect(try await store.state(of: 1) == .open(head: 4))

        // The outbox: seven stored messages, none announced yet.
        let refs = [
            MessageRef(room: 1, id: 1), MessageRef(room: 1, id: 2), MessageRef(room: 1, id: 3),
            MessageRef(room: 1, id: 4),
            MessageRef(room: 2, id: 1), MessageRef(room: 3, id: 1), MessageRef(room: 3, id: 2),
        ]
        try await store.announced([MessageRef(room: 1, id: 2)])
        // Too young for the relay: a handler may still be publishing them.
        let young = try await store.relayUnannounced(olderThan: .seconds(60), limit: 100) { _ in [] }
        #expect(young == .relayed(published: 0, failed: 0, backlog: 6))
        try await Task.sleep(for: .milliseconds(20))
        // The broker takes room 1's first message only; room 2's and 3's are refused.
        let seen = Mutex<[MessageStored]>([])
        let pass = try await store.relayUnannounced(olderThan: .milliseconds(1), limit: 100) { due in
            seen.withLock { $0 = due }
            return [MessageRef(room: 1, id: 1)]
        }
        #expect(pass == .relayed(published: 1, failed: 5, backlog: 5))
        #expect(seen.withLock { $0.map { MessageRef($0.message) } } == refs.filter { $0 != MessageRef(room: 1, id: 2) })
        #expect(seen.withLock { $0.first?.message } == hi)
        #expect(seen.withLock { $0.first?.author } == ann)
        // Only one pass at a time; then a removed room's rows go without a publish.
        #expect(try await store.remove(rooms: [3]) == 2)
        let after = try await store.relayUnannounced(olderThan: .milliseconds(1), limit: 2) { due in
            due.map { MessageRef($0.message) }
        }
        #expect(after == .relayed(published: 2, failed: 0, backlog: 3), "the limit counts: room 1's ids 3 and 4")
        let rest = try await store.relayUnannounced(olderThan: .milliseconds(1), limit: 100) { due in
            due.map { MessageRef($0.message) }
        }
        #expect(rest == .relayed(published: 1, failed: 0, backlog: 0), "room 2's message; room 3's rows dropped")
    }

    @Test func theInMemoryStoreKeepsTheGroupCommitRules() async throws {
        try await Self.checkGroupCommit(InMemoryMessageStore())
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func thePostgresStoreKeepsTheGroupCommitRules() async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresMessageStore(database: database)
            try await store.migrate()
            try await Self.checkGroupCommit(store)
        }
    }

    /// Says appended together answer as each would alone: the room's next id,
    /// a phone's repeat, a key stored before, a room without a log; and every
    /// stored one is in the outbox.
    static func checkGroupCommit(_ store: some MessageStore) async throws {
        let later = Deadline.after(TestPatience.deadline)
        let ann = SessionID.random()
        let bob = SessionID.random()
        for room: RoomID in [21, 22, 23] { try await store.open(room) }
        func say(
            _ room: RoomID, _ nick: String, _ text: String, _ author: SessionID?, _ key: String, by: Deadline = later
        ) -> NewMessage {
            NewMessage(room: room, nick: nick, text: text, author: author, key: key, commitBy: by)
        }
        let first = try await store.append([
            say(21, "Ann", "one", ann, "g1"), say(22, "Bob", "two", bob, "g2"), say(23, "jack", "three", nil, "g3"),
            say(24, "Ann", "nowhere", ann, "g4"),
        ])
        #expect(first.map { try? $0.get()?.message.id } == [1, 1, 1, nil])
        #expect(try await store.state(of: 24) == .unknown, "a room without a log stores nothing")
        guard case .success(.stored(let one)?) = first[0], case .success(.stored(let three)?) = first[2] else {
            Issue.record("not stored: \(first)")
            return
        }
        #expect(one.text == "one" && one.nick == "Ann" && one.room == 21)
        let second = try await store.append([
            say(21, "Ann", "one", ann, "g5"),  // Ann's repeat
            say(22, "Bob", "again", bob, "g2"),  // a key stored before
            say(23, "jack", "three", nil, "g6"),  // an anonymous repeat
        ])
        #expect(try second[0].get() == .repeated(one, author: ann))
        #expect(throws: DuplicateIdempotencyKey.self) { try second[1].get() }
        #expect(try second[2].get() == .repeated(three, author: nil))
        let third = try await store.append([say(21, "Ann", "four", ann, "g7"), say(22, "Bob", "five", bob, "g8")])
        #expect(third.map { try? $0.get()?.message.id } == [2, 2])
        await #expect(throws: (any Error).self, "a say past its commit deadline fails the batch") {
            try await store.append([
                say(23, "jill", "late", nil, "g9", by: .after(.milliseconds(-1))), say(21, "x", "y", nil, "g10"),
            ])
        }
        #expect(try await store.stored(key: "g9") == nil, "the late say is not stored")
        #expect(try await store.stored(key: "g10") == nil, "nor the batch after it")
        #expect(
            try await store.heads([21, 22, 23]) == [
                RoomHead(room: 21, head: 2), RoomHead(room: 22, head: 2), RoomHead(room: 23, head: 1),
            ])
        let outbox = try await store.relayUnannounced(olderThan: .zero, limit: 100) { due in
            due.map { MessageRef($0.message) }
        }
        #expect(outbox == .relayed(published: 5, failed: 0, backlog: 0))
    }
}
