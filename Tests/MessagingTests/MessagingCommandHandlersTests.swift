import GeoChatBus
import GeoChatDomain
import Logging
import Testing

@testable import MessagingService

/// The messaging service's command handlers over an in-memory store and event
/// log; the rooms service that confirms a room is a handler on the same
/// in-memory bus.
@Suite struct MessagingCommandHandlersTests {
    let store = InMemoryMessageStore()
    let events = RecordedEvents()
    let unpublished = UnpublishedMessages()
    let bus = InMemoryCommandBus()
    let room: RoomID = 42
    let author = SessionID.random()

    init() {
        var rooms = CommandHandlers(topic: Topics.roomsCommands)
        rooms.on(LookupRoom.self) { [room] command, _ in
            guard command.room == room else { throw ProtocolError.noSuchChat }
            return RoomInfo(id: room, position: MercatorPoint(x: 0.5, y: 0.5)!, zoom: ZoomLevel(3)!, topic: "Harbour")
        }
        bus.register(rooms)
        bus.register(
            MessagingCommandHandlers(
                store: store, bus: bus, events: events, unpublished: unpublished, logger: Logger(label: "test")
            ).handlers)
    }

    func say(_ text: String, in room: RoomID? = nil, key: String = IdempotencyKey.random()) async throws(RequestError)
        -> ChatMessage
    {
        try await bus.send(Say(room: room ?? self.room, session: author, nick: "Ann", text: text), idempotencyKey: key, within: .seconds(30))
    }

    @Test func saysGetDenseIdsInOrderAndAreAnnouncedWithTheirAuthor() async throws {
        let first = try await say("one")
        let second = try await say("  two  ")
        #expect([first.id, second.id] == [1, 2])
        #expect(second.text == "two", "the text is trimmed")
        let announced = events.published(MessageStored.self)
        #expect(announced.map(\.message) == [first, second])
        #expect(announced.allSatisfy { $0.author == author })
    }

    @Test func aSayIntoARoomNobodyKnowsIsNoSuchChatAndStoresNothing() async throws {
        await #expect(throws: RequestError.refused(.noSuchChat)) { try await say("hello?", in: 999) }
        #expect(try await store.state(of: 999) == .unknown)
        #expect(events.count == 0)
    }

    @Test(arguments: ["", "   ", String(repeating: "x", count: Limits.messageLength.upperBound + 1)])
    func aBadTextIsRefusedAndStoresNothing(_ text: String) async throws {
        await #expect(throws: RequestError.self) { try await say(text) }
        #expect(events.count == 0)
        #expect(try await store.messageCounts([room]).first?.messages ?? 0 == 0)
    }

    @Test func aRetriedSayIsAnsweredAsTheFirstTimeAndAnnouncedAgain() async throws {
        let first = try await say("once", key: "say-1")
        let again = try await say("once", key: "say-1")
        #expect(again == first)
        #expect(try await store.messageCounts([room]).first?.messages == 1)
        // Announced again: the first attempt may have died between commit and publish.
        #expect(events.published(MessageStored.self).map(\.message.id) == [first.id, first.id])
    }

    @Test func aStoredSayWhoseEventTheBrokerRefusesIsAcknowledgedAndQueued() async throws {
        events.refuse(true)
        let stored = try await say("stored anyway")
        #expect(unpublished.count == 1)
        #expect(try await store.stored(key: "-")?.0 == nil)
        #expect(try await store.messageCounts([room]).first?.messages == 1)
        #expect(stored.id == 1)
    }

    @Test func aSayWithTooLittleTimeLeftToCommitIsNotStored() async throws {
        // Inside the commit margin: the requester would answer "unavailable" before the commit.
        await #expect(throws: RequestError.self) {
            try await bus.send(
                Say(room: room, session: author, nick: "Ann", text: "late"), idempotencyKey: "late",
                deadline: .after(Deadline.commit - .milliseconds(50)))
        }
        #expect(try await store.messageCounts([room]).first?.messages ?? 0 == 0)
    }

    @Test func historyAnswersAfterAnIdOrTheLatestAndKnowsTheHead() async throws {
        for i in 1...5 { _ = try await say("m\(i)") }
        let after = try await bus.send(ReadHistory(room: room, after: 2, limit: 2), within: .seconds(30))
        #expect(after.messages.map(\.id) == [3, 4])
        #expect(after.head == 5)
        let latest = try await bus.send(ReadHistory(room: room, after: nil, limit: 2), within: .seconds(30))
        #expect(latest.messages.map(\.id) == [4, 5])
        await #expect(throws: RequestError.refused(.noSuchChat)) {
            try await bus.send(ReadHistory(room: 999, after: nil, limit: 2), within: .seconds(30))
        }
    }

    @Test func removedRoomsLoseTheirMessagesAndTakeNoMore() async throws {
        _ = try await say("doomed")
        #expect(try await bus.send(CountMessages(rooms: [room, 7]), within: .seconds(30)).map(\.messages) == [1, 0])
        _ = try await bus.send(RemoveRoomMessages(rooms: [room], job: 1, batch: 1), within: .seconds(30))
        #expect(try await store.state(of: room) == .removed)
        await #expect(throws: RequestError.refused(.noSuchChat)) { try await say("after") }
        await #expect(throws: RequestError.self) {
            try await bus.send(CountMessages(rooms: Array(1...1001)), within: .seconds(30))
        }
    }
}
