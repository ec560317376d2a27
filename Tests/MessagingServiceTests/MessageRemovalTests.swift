import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import Synchronization
import Testing

@testable import MessagingService

/// The rules of an operator's message removal, on both stores: a removed
/// message keeps its id as a tombstone (ids stay dense), its text is gone
/// everywhere it is read, and its event waits in the outbox with it.
@Suite struct MessageRemovalTests {
    @Test func theInMemoryStoreKeepsTheRemovalRules() async throws {
        try await Self.checkRemovals(InMemoryMessageStore())
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func thePostgresStoreKeepsTheRemovalRules() async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresMessageStore(database: database)
            try await store.migrate()
            try await Self.checkRemovals(store)
        }
    }

    static func checkRemovals(_ store: some MessageStore) async throws {
        let room: RoomID = 5
        let other: RoomID = 6
        let spammer = SessionID.random()
        let neighbour = SessionID.random()
        let later = Deadline.after(.seconds(5))
        try await store.open(room)
        try await store.open(other)
        // Room 5: 1 2 3 by the spammer, 4 by the neighbour, 5 by the spammer, 6 anonymous; room 6: 1 by the spammer.
        let authors: [SessionID?] = [spammer, spammer, spammer, neighbour, spammer, nil]
        for (i, author) in authors.enumerated() {
            _ = try await store.append(
                room: room, nick: "n", text: "m\(i + 1)", author: author, key: "k\(i + 1)", commitBy: later)
        }
        _ = try await store.append(
            room: other, nick: "n", text: "elsewhere", author: spammer, key: "o1", commitBy: later)

        // One message: a tombstone with its id, its text gone; a second removal changes nothing.
        let one = try await store.remove(.message(room: room, id: 2), limit: 1)
        #expect(one.map(\.id) == [2])
        #expect(one.allSatisfy { $0.removed && $0.text.isEmpty })
        #expect(try await store.remove(.message(room: room, id: 2), limit: 1).isEmpty, "removed already")
        #expect(try await store.state(of: room) == .open(head: 6, removed: 1), "the head and the ids stay")

        // A timeline's read: dense, the tombstone in its place. A reader's: without it, `limit` counting the others.
        let dense = try await store.history(room: room, head: 6, after: 0, limit: 3, skipRemoved: false)
        #expect(dense.map(\.id) == [1, 2, 3])
        #expect(dense.map(\.removed) == [false, true, false])
        #expect(dense[1].text.isEmpty)
        #expect(
            try await store.history(room: room, head: 6, after: 0, limit: 2, skipRemoved: true).map(\.id) == [1, 3])
        #expect(try await store.history(room: room, head: 6, after: 1, limit: 1, skipRemoved: true).map(\.id) == [3])
        #expect(
            try await store.history(room: room, head: 3, after: nil, limit: 2, skipRemoved: true).map(\.id) == [1, 3])
        #expect(try await store.stored(key: "k2")?.0.removed == true, "a retry of the say finds the tombstone")
        #expect(try await store.stored(key: "k2")?.0.text == "")
        #expect(try await store.messageCounts([room]).map(\.messages) == [5], "counts leave removed ones out")

        // A session's messages in one room, oldest first, a batch at a time; nobody else's.
        #expect(
            try await store.remove(.bySession(spammer, room: room, sinceMs: 0), limit: 2).map(\.id) == [1, 3])
        #expect(try await store.remove(.bySession(spammer, room: room, sinceMs: 0), limit: 2).map(\.id) == [5])
        #expect(try await store.remove(.bySession(spammer, room: room, sinceMs: 0), limit: 2).isEmpty)
        #expect(
            try await store.history(room: room, head: 6, after: 0, limit: 10, skipRemoved: true).map(\.id) == [4, 6])
        #expect(
            try await store.heads([room, other]) == [
                RoomHead(room: room, head: 6, removed: 4), RoomHead(room: other, head: 1),
            ],
            "the head check's second number: how many were removed")
        #expect(try await store.shownFrom([room, other, 99]) == [room: 4, other: 1], "where shown messages start")
        // From a time on: nothing stored after an hour from now.
        let future = WallClock.nowMs() + 3_600_000
        #expect(try await store.remove(.bySession(spammer, room: nil, sinceMs: future), limit: 10).isEmpty)

        // The outbox holds each tombstone's event: the relay announces the removal, not the old text.
        let published = Mutex<[ChatMessage]>([])
        _ = try await store.relayUnannounced(olderThan: .zero, limit: 100) { due in
            published.withLock { $0 += due.map(\.message) }
            return due.map(\.ref)
        }
        let relayed = published.withLock { $0 }.filter { $0.room == room }
        #expect(relayed.filter(\.removed).map(\.id) == [1, 2, 3, 5])
        #expect(relayed.filter(\.removed).allSatisfy { $0.text.isEmpty })
        #expect(relayed.filter { !$0.removed }.map(\.id) == [4, 6])

        // Everywhere: the other room's, unless that room was removed.
        _ = try await store.remove(rooms: [other])
        #expect(try await store.remove(.bySession(spammer, room: nil, sinceMs: 0), limit: 10).isEmpty)
        #expect(try await store.remove(.message(room: other, id: 1), limit: 1).isEmpty, "a removed room is left alone")
    }

    @Test func theInMemoryStoreFindsAMessagesSender() async throws {
        try await Self.checkSenderOf(InMemoryMessageStore())
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func thePostgresStoreFindsAMessagesSender() async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresMessageStore(database: database)
            try await store.migrate()
            try await Self.checkSenderOf(store)
        }
    }

    /// "All of this sender's", from one of their messages: the operator reading
    /// a room sees nicknames, the store knows the session behind each message.
    static func checkSenderOf(_ store: some MessageStore) async throws {
        let room: RoomID = 7
        let other: RoomID = 8
        let spammer = SessionID.random()
        let neighbour = SessionID.random()
        let later = Deadline.after(.seconds(5))
        try await store.open(room)
        try await store.open(other)
        // Room 7: 1 by the spammer, 2 by the neighbour, 3 by the spammer, 4 anonymous; room 8: 1 by the spammer.
        for (i, author) in ([spammer, neighbour, spammer, nil] as [SessionID?]).enumerated() {
            _ = try await store.append(
                room: room, nick: "n", text: "m\(i + 1)", author: author, key: "s\(i + 1)", commitBy: later)
        }
        _ = try await store.append(room: other, nick: "n", text: "x", author: spammer, key: "s-o", commitBy: later)

        #expect(try await store.remove(.message(room: room, id: 1), limit: 1).map(\.id) == [1])
        // The sender of a removed message is still known: their others go, in this room only.
        let inRoom = MessageSelection.bySenderOf(MessageKey(room: room, id: 1), room: room, sinceMs: 0)
        #expect(try await store.remove(inRoom, limit: 10).map(\.id) == [3])
        #expect(try await store.remove(inRoom, limit: 10).isEmpty)
        // Everywhere: the other room's too, nobody else's.
        let everywhere = MessageSelection.bySenderOf(MessageKey(room: room, id: 3), room: nil, sinceMs: 0)
        #expect(
            try await store.remove(everywhere, limit: 10).map { [$0.room, RoomID($0.id.rawValue)] } == [[other, 1]])
        // A message without a known sender selects nothing (not everyone without one).
        #expect(try await store.shownFrom([other]) == [other: 2], "every message removed: the head + 1")
        let anonymous = MessageSelection.bySenderOf(MessageKey(room: room, id: 4), room: nil, sinceMs: 0)
        #expect(try await store.remove(anonymous, limit: 10).isEmpty)
        #expect(
            try await store.history(room: room, head: 4, after: 0, limit: 10, skipRemoved: true).map(\.id) == [2, 4])
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func saysDuringASendersRemovalAreRemovedOrKeptWholeInPostgres() async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresMessageStore(database: database)
            try await store.migrate()
            try await Self.checkSaysDuringRemoval(store)
        }
    }

    @Test func saysDuringASendersRemovalAreRemovedOrKeptWholeInMemory() async throws {
        try await Self.checkSaysDuringRemoval(InMemoryMessageStore())
    }

    /// Issue 41: a say that races a removal of its sender's messages is removed
    /// whole (a tombstone, counted, its removal announced) or kept whole (its
    /// text, its event), never half. Four writers say while small removals run.
    static func checkSaysDuringRemoval(_ store: some MessageStore) async throws {
        let room: RoomID = 21
        let spammer = SessionID.random()
        let later = Deadline.after(.seconds(30))
        try await store.open(room)
        let writers = 4
        let saysEach = 40
        let removing = MessageSelection.bySession(spammer, room: room, sinceMs: 0)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for i in 0..<saysEach {
                        _ = try await store.append(
                            room: room, nick: "spam", text: "w\(writer) m\(i)", author: spammer, key: "r\(writer)-\(i)",
                            commitBy: later)
                    }
                    return 0
                }
            }
            group.addTask {
                // Removals while the says go on, a few at a time, until a dozen went: the rest stay.
                var removed = 0
                while removed < 12 {
                    removed += try await store.remove(removing, limit: 3).count
                    await Task.yield()
                }
                return removed
            }
            for try await _ in group {}
        }
        let head = MessageID(Int64(writers * saysEach))
        let all = try await store.history(room: room, head: head, after: 0, limit: 1000, skipRemoved: false)
        #expect(all.map(\.id) == Array(MessageID(1)...head), "every say stored once, ids dense")
        let tombstones = all.filter(\.removed)
        #expect(tombstones.allSatisfy { $0.text.isEmpty }, "a removed message has no text left")
        #expect(all.filter { !$0.removed }.allSatisfy { $0.text.hasPrefix("w") && $0.text.contains(" m") })
        #expect((12...14).contains(tombstones.count), "removed whole: what the removals took, no more, no less")
        #expect(
            try await store.heads([room]) == [RoomHead(room: room, head: head, removed: Int64(tombstones.count))],
            "the head check's count is every removal, none lost to the race")
        // The outbox announces each message as it is now: a tombstone as removed, the rest with their text.
        let published = Mutex<[MessageID: ChatMessage]>([:])
        _ = try await store.relayUnannounced(olderThan: .zero, limit: 1000) { due in
            published.withLock { held in for event in due { held[event.message.id] = event.message } }
            return due.map(\.ref)
        }
        let announced = published.withLock { $0 }
        for message in all { #expect(announced[message.id] == message, "message \(message.id) announced as it is") }
        // And a later removal takes the rest: nothing of the sender is left.
        while try await !store.remove(removing, limit: 50).isEmpty {}
        #expect(try await store.history(room: room, head: head, after: 0, limit: 1000, skipRemoved: true).isEmpty)
    }

    @Test func aSessionsMessagesEverywhereGoTogether() async throws {
        for store in [InMemoryMessageStore()] as [any MessageStore] { try await Self.checkEverywhere(store) }
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func aSessionsMessagesEverywhereGoTogetherInPostgres() async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresMessageStore(database: database)
            try await store.migrate()
            try await Self.checkEverywhere(store)
        }
    }

    static func checkEverywhere(_ store: some MessageStore) async throws {
        let spammer = SessionID.random()
        let later = Deadline.after(.seconds(5))
        for room in [RoomID(11), 12, 13] {
            try await store.open(room)
            _ = try await store.append(
                room: room, nick: "s", text: "buy", author: spammer, key: "e\(room)", commitBy: later)
            _ = try await store.append(
                room: room, nick: "t", text: "hi", author: .random(), key: "f\(room)", commitBy: later)
        }
        let removed = try await store.remove(.bySession(spammer, room: nil, sinceMs: 0), limit: 10)
        #expect(removed.map(\.room) == [11, 12, 13])
        #expect(removed.map(\.id) == [1, 1, 1])
        #expect(try await store.messageCounts([11, 12, 13]).map(\.messages) == [1, 1, 1])
    }
}
