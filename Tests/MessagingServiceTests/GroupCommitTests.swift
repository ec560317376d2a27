import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import Testing

@testable import MessagingService

/// Says that arrive together share transactions, and each gets the answer it
/// would have had alone.
@Suite struct GroupCommitTests {
    @Test func concurrentSaysOfManyRoomsAreAllStoredWithDenseIdsPerRoom() async throws {
        let store = InMemoryMessageStore()
        let rooms = (1...10).map(RoomID.init)
        for room in rooms { try await store.open(room) }
        let commits = GroupCommit(store: store, maxBatch: 4)
        let later = Deadline.after(TestPatience.deadline)
        // Five says per room at once: a batch takes one per room, the others wait their turn.
        let stored = try await withThrowingTaskGroup(of: ChatMessage?.self) { group in
            for room in rooms {
                for n in 1...5 {
                    group.addTask {
                        try await commits.append(
                            NewMessage(
                                room: room, nick: "n", text: "\(room)-\(n)", author: nil, key: "k\(room)-\(n)",
                                commitBy: later)
                        )?.message
                    }
                }
            }
            return try await group.reduce(into: [ChatMessage]()) { if let message = $1 { $0.append(message) } }
        }
        #expect(stored.count == 50)
        for room in rooms {
            #expect(stored.filter { $0.room == room }.map(\.id).sorted() == [1, 2, 3, 4, 5])
        }
        #expect(try await store.heads(rooms).allSatisfy { $0.head == 5 })
    }

    @Test func aKeyStoredBeforeAndARoomWithoutALogAnswerAsAlone() async throws {
        let store = InMemoryMessageStore()
        try await store.open(1)
        let commits = GroupCommit(store: store)
        let later = Deadline.after(TestPatience.deadline)
        let first = try await commits.append(
            NewMessage(room: 1, nick: "a", text: "x", author: nil, key: "k", commitBy: later))
        #expect(first?.message.id == 1)
        await #expect(throws: DuplicateIdempotencyKey.self) {
            try await commits.append(
                NewMessage(room: 1, nick: "a", text: "other", author: nil, key: "k", commitBy: later))
        }
        #expect(
            try await commits.append(NewMessage(room: 2, nick: "a", text: "x", author: nil, key: "k2", commitBy: later))
                == nil)
    }
}
