@testable import Gateway
import GeoChatDomain
import XCTest

final class RoomTimelineTests: XCTestCase {
    func message(_ id: MessageID) -> ChatMessage {
        ChatMessage(room: 1, id: id, nick: "n", text: "m\(id)", addedAt: 0)
    }

    func timeline(head: MessageID, latest: Int = 200, capacity: Int = 200) -> RoomTimeline {
        let first = max(1, head - MessageID(latest) + 1)
        let messages = head == 0 ? [] : (first...head).map(message)
        return RoomTimeline(history: MessageHistory(room: 1, head: head, messages: messages), capacity: capacity)
    }

    func ids(_ read: RoomTimeline.Read) -> [MessageID]? {
        if case .messages(let slice) = read { return slice.map(\.id) }
        return nil
    }

    func testReadsAfterPastAndLatest() {
        let t = timeline(head: 10)
        XCTAssertEqual(ids(t.read(past: 0, limit: 3)), [8, 9, 10])
        XCTAssertEqual(ids(t.read(past: 4, limit: 3)), [5, 6, 7])
        XCTAssertEqual(ids(t.read(past: 10, limit: 3)), [])
        XCTAssertEqual(ids(t.read(past: 99, limit: 3)), [])
        XCTAssertEqual(ids(t.read(past: 0, limit: 50)), Array(1...10))
    }

    func testOlderThanTheWindowNeedsHistory() {
        let t = timeline(head: 500, latest: 200)
        XCTAssertEqual(t.read(past: 100, limit: 50), .needsHistory)
        XCTAssertEqual(ids(t.read(past: 300, limit: 2)), [301, 302])
        XCTAssertEqual(t.read(past: 0, limit: 201), .needsHistory)
    }

    func testMessageAheadOfAGapIsHeldBack() {
        var t = timeline(head: 5)
        XCTAssertTrue(t.apply(message(7)))
        XCTAssertEqual(t.head, 5)
        XCTAssertEqual(ids(t.read(past: 5, limit: 10)), [], "7 must not be shown before 6")
        XCTAssertFalse(t.apply(message(6)))
        XCTAssertEqual(t.head, 7)
        XCTAssertEqual(ids(t.read(past: 5, limit: 10)), [6, 7])
    }

    func testDuplicatesAndOldMessagesAreIgnored() {
        var t = timeline(head: 5)
        t.apply(message(3))
        t.apply(message(5))
        XCTAssertEqual(ids(t.read(past: 0, limit: 50)), [1, 2, 3, 4, 5])
    }

    func testWindowStaysBoundedAndContiguous() {
        var t = timeline(head: 0, capacity: 10)
        for id in 1...1000 { t.apply(message(MessageID(id))) }
        XCTAssertEqual(t.head, 1000)
        XCTAssertLessThanOrEqual(t.window.count, 15)
        XCTAssertEqual(ids(t.read(past: 0, limit: 3)), [998, 999, 1000])
        XCTAssertEqual(t.read(past: 10, limit: 3), .needsHistory)
    }

    /// The polling contract, checked over random arrival orders: a poller that
    /// remembers only the highest id it saw never misses one. When the timeline
    /// no longer holds what the poller needs, the gateway reads it from the
    /// messaging service; here the "database" holds every id, as PostgreSQL does.
    func testPollersNeverMissAnIdWhateverTheArrivalOrder() {
        var generator = SystemRandomNumberGenerator()
        let total: MessageID = 120
        for _ in 0..<200 {
            var t = timeline(head: 0, capacity: 50)
            var arrivals = (1...total).map { $0 }
            arrivals.shuffle(using: &generator)
            var seen: [MessageID] = []
            func poll() {
                let past = seen.last ?? 0
                switch t.read(past: past, limit: 20) {
                case .messages(let slice):
                    if seen.isEmpty, let first = slice.first?.id { seen = Array(1..<first) }
                    seen += slice.map(\.id)
                case .needsHistory:
                    seen += (past + 1...min(past + 20, total)).map { $0 }
                }
            }
            for id in arrivals {
                t.apply(message(id))
                poll()
            }
            while seen.last != total { poll() }
            XCTAssertEqual(seen, Array(1...total))
        }
    }
}
