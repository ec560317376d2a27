import GeoChatDomain
import GeoChatTestSupport
import Testing

@testable import GatewayCore

/// One room's timeline: what it reveals and what it holds back. Expected
/// messages are built here from their ids, never read back from the timeline.
@Suite struct RoomTimelineTests {
    static func message(_ id: MessageID, text: String? = nil) -> ChatMessage {
        ChatMessage(
            room: 1, id: id, nick: "n\(id.rawValue % 4)", text: text ?? "message \(id)",
            addedAt: 1_700_000_000 + id.rawValue)
    }

    static func messages(_ ids: ClosedRange<MessageID>) -> [ChatMessage] { ids.map { message($0) } }

    /// A timeline loaded from a history whose latest messages are `ids`.
    static func timeline(_ ids: ClosedRange<MessageID>?, capacity: Int = 200) -> RoomTimeline {
        let history =
            ids.map { MessageHistory(room: 1, head: $0.upperBound, messages: messages($0)) }
            ?? MessageHistory(room: 1, head: 0, messages: [])
        return RoomTimeline(history: history, capacity: capacity)
    }

    static func shown(_ read: RoomTimeline.Read) -> [ChatMessage]? {
        if case .messages(let slice) = read { return Array(slice) }
        return nil
    }

    @Test func readsAfterPastAndTheLatest() {
        let t = Self.timeline(1...10)
        #expect(Self.shown(t.read(past: 0, limit: 3)) == Self.messages(8...10))
        #expect(Self.shown(t.read(past: 4, limit: 3)) == Self.messages(5...7))
        #expect(Self.shown(t.read(past: 8, limit: 5)) == Self.messages(9...10))
        #expect(Self.shown(t.read(past: 10, limit: 3)) == [])
        #expect(Self.shown(t.read(past: 99, limit: 3)) == [])
        #expect(Self.shown(t.read(past: 0, limit: 50)) == Self.messages(1...10), "the whole history, fewer than asked")
    }

    @Test func olderThanTheWindowNeedsHistory() {
        // 200 of 500 held: 301…500.
        let t = Self.timeline(301...500)
        #expect(t.read(past: 100, limit: 50) == .needsHistory)
        #expect(t.read(past: 299, limit: 2) == .needsHistory)
        #expect(Self.shown(t.read(past: 300, limit: 2)) == Self.messages(301...302))
        #expect(t.read(past: 0, limit: 201) == .needsHistory, "fewer held than asked, and not the whole history")
        #expect(Self.shown(t.read(past: 0, limit: 200)) == Self.messages(301...500))
    }

    @Test func anEmptyRoomShowsNothingThenItsFirstMessages() {
        var t = Self.timeline(nil)
        #expect(Self.shown(t.read(past: 0, limit: 10)) == [])
        #expect(t.apply(Self.message(1)) == false)
        #expect(t.apply(Self.message(2)) == false)
        #expect(Self.shown(t.read(past: 0, limit: 10)) == Self.messages(1...2))
    }

    @Test func aHistoryThatIsNotAGapFreeTailStartsEmptyAtItsHead() {
        let broken = MessageHistory(room: 1, head: 10, messages: [Self.message(8), Self.message(10)])
        var t = RoomTimeline(history: broken, capacity: 200)
        #expect(t.head == 10)
        #expect(t.read(past: 0, limit: 5) == .needsHistory)
        #expect(t.read(past: 7, limit: 5) == .needsHistory)
        #expect(Self.shown(t.read(past: 10, limit: 5)) == [])
        t.apply(Self.message(11))
        #expect(Self.shown(t.read(past: 10, limit: 5)) == [Self.message(11)])
    }

    @Test func aMessageAheadOfAGapIsHeldBackUntilTheGapIsFilled() {
        var t = Self.timeline(1...5)
        #expect(t.apply(Self.message(7)) == true, "a gap below 7")
        #expect(t.hasGap)
        #expect(t.head == 5)
        #expect(Self.shown(t.read(past: 5, limit: 10)) == [], "7 must not be shown before 6")
        #expect(Self.shown(t.read(past: 0, limit: 10)) == Self.messages(1...5))
        #expect(t.apply(Self.message(6)) == false)
        #expect(t.head == 7)
        #expect(Self.shown(t.read(past: 5, limit: 10)) == Self.messages(6...7))
    }

    @Test func duplicatesAndOldMessagesChangeNothing() {
        var t = Self.timeline(1...5)
        #expect(t.apply(Self.message(3, text: "again")) == false)
        #expect(t.apply(Self.message(5, text: "again")) == false)
        #expect(t.head == 5)
        #expect(Self.shown(t.read(past: 0, limit: 50)) == Self.messages(1...5))
        // A message pending above a gap, delivered twice, is shown once.
        t.apply(Self.message(7))
        t.apply(Self.message(7))
        t.apply(Self.message(6))
        t.apply(Self.message(7))
        #expect(Self.shown(t.read(past: 5, limit: 50)) == Self.messages(6...7))
    }

    @Test func theWindowStaysBoundedAndGapFree() {
        var t = Self.timeline(nil, capacity: 10)
        for id: MessageID in 1...1000 { t.apply(Self.message(id)) }
        #expect(t.head == 1000)
        #expect(t.window.count <= 15)
        #expect(t.window.count >= 10)
        #expect(zip(t.window, t.window.dropFirst()).allSatisfy { $0.id + 1 == $1.id })
        #expect(t.window.last == Self.message(1000))
        #expect(Self.shown(t.read(past: 0, limit: 3)) == Self.messages(998...1000))
        #expect(Self.shown(t.read(past: 990, limit: 3)) == Self.messages(991...993))
        #expect(t.read(past: 10, limit: 3) == .needsHistory)
        #expect(t.read(past: 0, limit: 16) == .needsHistory, "no longer the whole history")
    }

    @Test func messagesAheadOfAGapAreHeldOnlyUpToABound() {
        var t = Self.timeline(1...5)
        let beyond = Int64(RoomTimeline.maxPending) + 10
        for id in 7...(6 + beyond) { t.apply(Self.message(MessageID(id))) }
        t.apply(Self.message(6))
        // 7 … 6+maxPending were held; the rest was not kept but is known: a gap
        // (the gap fill brings it), and counted.
        let lastHeld = MessageID(6 + Int64(RoomTimeline.maxPending))
        #expect(t.head == lastHeld)
        #expect(t.hasGap, "the messages not held are still to fetch")
        #expect(t.known == MessageID(6 + beyond))
        #expect(t.overflowed == 10)
        #expect(Self.shown(t.read(past: lastHeld - 2, limit: 10)) == Self.messages(lastHeld - 1...lastHeld))
    }

    /// The polling contract over random arrival orders: a poller that
    /// remembers only the highest id it saw never misses one. When the
    /// timeline no longer holds what it needs, the gateway reads the messaging
    /// service; here that is `database`, which holds every committed message,
    /// as PostgreSQL does.
    @Test(arguments: 0..<100 as Range<UInt64>)
    func pollersNeverMissAnIdWhateverTheArrivalOrder(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let loadedUpTo: MessageID = 10
        let total: MessageID = 130
        let database = Self.messages(1...total)
        var t = Self.timeline(1...loadedUpTo, capacity: 50)
        var arrivals = Array(loadedUpTo + 1...total)
        arrivals.shuffle(using: &random)
        var seen: [ChatMessage] = []
        var past = loadedUpTo
        var violations: [String] = []

        func poll() {
            let limit = Int(random.next(upTo: 25)) + 1
            let answer: [ChatMessage]
            switch t.read(past: past, limit: limit) {
            case .messages(let slice): answer = Array(slice)
            case .needsHistory: answer = Array(database.filter { $0.id > past }.prefix(limit))
            }
            if let first = answer.first, first.id != past + 1 {
                violations.append("past \(past) answered from \(first.id)")
            }
            if answer.count > limit { violations.append("\(answer.count) answered for limit \(limit)") }
            seen += answer
            past = seen.last?.id ?? past
        }
        for id in arrivals {
            t.apply(database[Int(id.rawValue) - 1])
            poll()
        }
        for _ in 0..<200 where past != total { poll() }

        #expect(violations == [])
        #expect(seen == Array(database[Int(loadedUpTo.rawValue)...]), "seed \(seed)")
    }
}
