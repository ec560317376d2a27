import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import Logging
import Testing

@testable import MessagingService

/// The messaging service's command handlers over an in-memory store and event
/// log; the rooms service that confirms a room is a handler on the same
/// in-memory bus.
@Suite struct MessagingCommandHandlersTests {
    let store = InMemoryMessageStore()
    let events = RecordedEvents()
    let outbox: OutboxRelay<MessageStored>
    let bus = InMemoryCommandBus()
    let room: RoomID = 42
    let author = SessionID.random()
    let operators = TestKeys.operatorSeal()

    init() {
        outbox = OutboxRelay(
            outbox: MessageOutbox(store: store), events: events, logger: Logger(label: "test"), grace: .zero)
        var rooms = CommandHandlers(topic: Topics.roomsCommands)
        rooms.on(LookupRoom.self) { [room] command, _ in
            guard command.room == room else { throw ProtocolError.noSuchChat }
            return RoomInfo(id: room, position: MercatorPoint(x: 0.5, y: 0.5)!, zoom: ZoomLevel(3)!, topic: "Harbour")
        }
        bus.register(rooms)
        bus.register(
            MessagingCommandHandlers(
                store: store, bus: bus, outbox: outbox, operatorSeal: operators, logger: Logger(label: "test")
            ).handlers)
    }

    /// The service starts only with a handler for every messaging command (`WireCommands`).
    @Test func everyMessagingCommandHasAHandler() throws {
        try MessagingCommandHandlers(
            store: store, bus: bus, outbox: outbox, operatorSeal: operators, logger: Logger(label: "test")
        ).handlers.requireEvery()
    }

    func say(
        _ text: String, in room: RoomID? = nil, key: String = IdempotencyKey.random(), by session: SessionID?? = nil,
        nick: String = "Ann"
    ) async throws(RequestError) -> ChatMessage {
        let checked: MessageText
        do throws(ProtocolError) { checked = try MessageText(checking: text) } catch { throw .refused(error) }
        return try await bus.send(
            Say(room: room ?? self.room, session: session ?? author, nick: nick, text: checked), idempotencyKey: key,
            within: TestPatience.deadline)
    }

    /// A `say` as a foreign or buggy requester could put it on the wire: its text unchecked.
    struct UncheckedSay: MessagingWireCommand {
        typealias Reply = ChatMessage
        static let name = Say.name
        var room: RoomID
        var session: SessionID?
        var nick: String
        var text: String
        var partitionKey: String? { String(room) }
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
        // On the wire too: the text's rule is checked as the command is decoded, and its error is the answer.
        let error = await #expect(throws: RequestError.self) {
            try await bus.send(
                UncheckedSay(room: room, session: author, nick: "Ann", text: text), within: TestPatience.deadline)
        }
        #expect(
            error.map { if case .refused(let refused) = $0 { refused.code != .unavailable } else { false } } == true)
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

    /// The handler hands the event over and does not wait for the broker; the
    /// broker's answer settles it shortly after.
    func settled() async throws {
        for _ in 0..<1000 where outbox.inFlight > 0 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(outbox.inFlight == 0)
    }

    @Test func aStoredSayWhoseEventTheBrokerRefusesIsAcknowledgedAndRelayedLater() async throws {
        events.refuse(true)
        let stored = try await say("stored anyway")
        try await settled()
        #expect(stored.id == 1)
        #expect(try await store.messageCounts([room]).first?.messages == 1)
        #expect(store.unannounced == [MessageRef(stored)], "its event waits in the outbox")
        #expect(try await outbox.pass() == .relayed(published: 0, failed: 1, backlog: 1), "still refused: kept")
        events.refuse(false)
        let second = try await say("after the broker came back")
        try await settled()
        #expect(try await outbox.pass() == .relayed(published: 1, failed: 0, backlog: 0))
        #expect(store.unannounced.isEmpty, "the handler's own publish is forgotten too")
        #expect(events.published(MessageStored.self).map(\.message.id).sorted() == [stored.id, second.id])
    }

    @Test func whatTheHandlerPublishedLeavesTheOutboxAndIsNotRelayedAgain() async throws {
        let first = try await say("one")
        try await settled()
        #expect(store.unannounced == [MessageRef(first)], "until the next pass deletes it")
        #expect(try await outbox.pass() == .relayed(published: 0, failed: 0, backlog: 0))
        #expect(events.published(MessageStored.self).count == 1)
    }

    /// A phone repeats a say it got no answer for with a new request (a new
    /// idempotency key): the same session, room, nick and text within 15 s is the same say.
    @Test func aPhonesRepeatWithANewKeyIsAnsweredWithTheFirstMessage() async throws {
        let first = try await say("are you there?")
        let again = try await say("are you there?")
        #expect(again == first)
        #expect(try await store.messageCounts([room]).first?.messages == 1)
        let other = try await say("are you there?", by: SessionID.random())
        #expect(other.id == 2, "another session's same words are a new message")
        let renamed = try await say("are you there?", nick: "Ann_2")
        #expect(renamed.id == 3, "under another nick it is a new message")
        let anonymous = try await say("are you there?", by: .some(nil), nick: "jack")
        let anonymousAgain = try await say("are you there?", by: .some(nil), nick: "jack")
        #expect(anonymousAgain == anonymous, "an add.php post repeated under the same name is one post")
        #expect(try await store.messageCounts([room]).first?.messages == 4)
    }

    @Test func aRepeatAfterTheWindowIsANewMessage() async throws {
        let clock = TestClock(nowMs: WallClock.nowMs())
        let store = InMemoryMessageStore(now: clock.read)
        try await store.open(room)
        let later = Deadline.after(.seconds(3600))
        let first = try await store.append(
            room: room, nick: "Ann", text: "hi", author: author, key: "a", commitBy: later)
        clock.advance(by: MessageRules.repeatWindowMs - 1)
        #expect(
            try await store.append(room: room, nick: "Ann", text: "hi", author: author, key: "b", commitBy: later)
                == .repeated(first!.message, author: author))
        clock.advance(by: 2)
        #expect(
            try await store.append(room: room, nick: "Ann", text: "hi", author: author, key: "c", commitBy: later)?
                .message.id == 2)
    }

    @Test func aSayWithTooLittleTimeLeftToCommitIsNotStored() async throws {
        // Inside the commit margin: the requester would answer "unavailable" before the commit.
        await #expect(throws: RequestError.self) {
            try await bus.send(
                Say(room: room, session: author, nick: "Ann", text: try MessageText(checking: "late")),
                idempotencyKey: "late",
                deadline: .after(Deadline.commit - .milliseconds(50)))
        }
        #expect(try await store.messageCounts([room]).first?.messages ?? 0 == 0)
    }

    @Test func historyAnswersAfterAnIdOrTheLatestAndKnowsTheHead() async throws {
        for i in 1...5 { _ = try await say("m\(i)") }
        let after = try await bus.send(ReadHistory(room: room, after: 2, limit: 2), within: TestPatience.deadline)
        #expect(after.messages.map(\.id) == [3, 4])
        #expect(after.head == 5)
        let latest = try await bus.send(ReadHistory(room: room, after: nil, limit: 2), within: TestPatience.deadline)
        #expect(latest.messages.map(\.id) == [4, 5])
        await #expect(throws: RequestError.refused(.noSuchChat)) {
            try await bus.send(ReadHistory(room: 999, after: nil, limit: 2), within: TestPatience.deadline)
        }
    }

    @Test func removedRoomsLoseTheirMessagesAndTakeNoMore() async throws {
        _ = try await say("doomed")
        #expect(
            try await bus.send(CountMessages(rooms: [room, 7]), within: TestPatience.deadline).map(\.messages) == [
                1, 0,
            ])
        // Expiry seals it: a forged one deletes nothing.
        await #expect(throws: RequestError.self) {
            try await bus.send(RemoveRoomMessages(rooms: [room], job: 1, batch: 1), within: TestPatience.deadline)
        }
        #expect(try await bus.send(CountMessages(rooms: [room]), within: TestPatience.deadline).map(\.messages) == [1])
        _ = try await bus.send(
            operators.sealed(RemoveRoomMessages(rooms: [room], job: 1, batch: 1)), within: TestPatience.deadline)
        #expect(try await store.state(of: room) == .removed)
        await #expect(throws: RequestError.refused(.noSuchChat)) { try await say("after") }
        await #expect(throws: RequestError.self) {
            try await bus.send(CountMessages(rooms: (1...1001).map(RoomID.init)), within: TestPatience.deadline)
        }
    }

    @Test func anOperatorsRemovalIsSealedAndAnnouncedAsTombstones() async throws {
        let first = try await say("spam")
        let second = try await say("hello", by: .some(.random()), nick: "Bo")
        let removal = RemoveMessages(.message(room: room, id: first.id), by: "ops")
        await #expect(throws: RequestError.self, "a forged removal removes nothing") {
            try await bus.send(removal, within: TestPatience.deadline)
        }
        #expect(try await bus.send(CountMessages(rooms: [room]), within: TestPatience.deadline).map(\.messages) == [2])
        let removed = try await bus.send(operators.sealed(removal), within: TestPatience.deadline)
        #expect(removed == RemovedMessages(removed: [MessageKey(room: room, id: first.id)], more: false))
        #expect(
            events.published(MessagesRemoved.self) == [
                MessagesRemoved(room: room, ids: [first.id], shownFrom: second.id)
            ],
            "gateways learn it on the message events, with where the room's shown messages start")
        let log = try await bus.send(
            ReadHistory(room: room, after: 0, limit: 10, skipRemoved: false), within: TestPatience.deadline)
        #expect(log.messages.filter(\.removed).map(\.text) == [""], "a tombstone keeps no text")
        #expect(
            try await bus.send(operators.sealed(removal), within: TestPatience.deadline).removed.isEmpty,
            "removed already: no change")
        let history = try await bus.send(
            ReadHistory(room: room, after: 0, limit: 10, skipRemoved: true), within: TestPatience.deadline)
        #expect(history.messages.map(\.id) == [second.id])
        await #expect(throws: RequestError.refused(ProtocolError(.noSuchChat, "no message 9 in room \(room)"))) {
            try await bus.send(
                operators.sealed(RemoveMessages(.message(room: room, id: 9), by: "ops")), within: TestPatience.deadline)
        }
        let unknownSender = RemoveMessages(.bySenderOf(MessageKey(room: room, id: 9), room: nil, sinceMs: 0), by: "ops")
        await #expect(
            throws: RequestError.refused(ProtocolError(.noSuchChat, "no message 9 in room \(room)")),
            "the sender of a message that is not there"
        ) { try await bus.send(operators.sealed(unknownSender), within: TestPatience.deadline) }
        await #expect(throws: RequestError.self, "a limit out of range") {
            try await bus.send(
                operators.sealed(RemoveMessages(.bySession(author, room: nil, sinceMs: 0), limit: 0, by: "ops")),
                within: TestPatience.deadline)
        }
    }

    @Test func aRemovalIsOneRecordARoomAndItsTombstonesLeaveTheOutboxOnceItIsOut() async throws {
        var said: [ChatMessage] = []
        for text in ["one", "two", "three"] { said.append(try await say(text)) }
        let kept = try await say("kept", by: .some(.random()), nick: "Bo")
        let removal = RemoveMessages(.bySession(author, room: nil, sinceMs: 0), by: "ops")
        let removed = try await bus.send(operators.sealed(removal), within: TestPatience.deadline)
        #expect(removed.removed.map(\.id) == said.map(\.id))
        try await settled()
        #expect(
            events.published(MessagesRemoved.self) == [
                MessagesRemoved(room: room, ids: said.map(\.id), shownFrom: kept.id)
            ], "three messages, one record")
        #expect(events.published(MessageStored.self).filter(\.message.removed).isEmpty)
        #expect(try await outbox.pass() == .relayed(published: 0, failed: 0, backlog: 0))
        #expect(store.unannounced.isEmpty, "the record took every tombstone's row")

        // The broker refuses the record: the relay publishes each tombstone on its own later.
        let late = try await say("four")
        try await outbox.pass()
        events.refuse(true)
        _ = try await bus.send(operators.sealed(removal), within: TestPatience.deadline)
        try await settled()
        #expect(store.unannounced == [MessageRef(late)], "kept for the relay")
        events.refuse(false)
        #expect(try await outbox.pass() == .relayed(published: 1, failed: 0, backlog: 0))
        #expect(events.published(MessageStored.self).filter(\.message.removed).map(\.message.id) == [late.id])
        #expect(store.unannounced.isEmpty)
    }
}
