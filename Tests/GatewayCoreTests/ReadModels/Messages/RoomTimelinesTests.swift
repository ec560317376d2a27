import GeoChatDomain
import GeoChatTestSupport
import Testing

@testable import GatewayCore

/// The read model's rules, one transition at a time, with the clock in the
/// test's hands. Expected messages are built here from their ids, never read
/// back from the state machine.
@Suite struct RoomTimelinesTests {
    static let room: RoomID = 7
    let t0 = ContinuousClock.now

    static func message(_ id: MessageID, room: RoomID = RoomTimelinesTests.room) -> ChatMessage {
        ChatMessage(
            room: room, id: id, nick: "n\(id.rawValue % 3)", text: "text \(id) of \(room)",
            addedAt: 1_700_000_000 + id.rawValue)
    }

    static func messages(_ ids: ClosedRange<MessageID>, room: RoomID = RoomTimelinesTests.room) -> [ChatMessage] {
        ids.map { message($0, room: room) }
    }

    /// The messaging service's answer for a room whose messages are `ids` (head = upper bound).
    static func history(_ ids: ClosedRange<MessageID>, room: RoomID = RoomTimelinesTests.room) -> MessageHistory {
        MessageHistory(room: room, head: ids.upperBound, messages: messages(ids, room: room))
    }

    static let emptyHistory = MessageHistory(room: room, head: 0, messages: [])

    func timelines(capacity: Int = 20) -> RoomTimelines {
        RoomTimelines(
            capacity: capacity, idleEviction: .seconds(600), removedMemory: .seconds(300), absentMemory: .seconds(2))
    }

    /// Polls a room nobody asked for yet; returns the load the state machine asks for.
    func startLoad(_ t: inout RoomTimelines, room: RoomID = RoomTimelinesTests.room, at now: ContinuousClock.Instant)
        -> RoomTimelines.Load?
    {
        guard case .startLoad(let load, _) = t.poll(room: room, past: 0, limit: 10, now: now) else { return nil }
        return load
    }

    /// A room loaded from `history` at `now`.
    func loaded(_ history: MessageHistory, capacity: Int = 20, at now: ContinuousClock.Instant? = nil) throws
        -> RoomTimelines
    {
        var t = timelines(capacity: capacity)
        let load = try #require(startLoad(&t, room: history.room, at: now ?? t0))
        #expect(t.historyLoaded(history, by: load, now: now ?? t0) == .loaded(fillGap: false))
        return t
    }

    // MARK: Loading

    @Test func aRoomsFirstPollLoadsItsLatestCapacityMessagesAndLaterPollsWaitForThatLoad() {
        var t = timelines(capacity: 20)
        #expect(t.roomCount == 0)
        let first = t.poll(room: Self.room, past: 0, limit: 10, now: t0)
        guard case .startLoad(let load, let limit) = first else {
            Issue.record("expected a load, got \(first)")
            return
        }
        #expect(load.room == Self.room)
        #expect(limit == 20)
        #expect(t.roomCount == 1)
        #expect(t.poll(room: Self.room, past: 3, limit: 5, now: t0) == .waitForLoad(load))
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: t0 + .seconds(1)) == .waitForLoad(load))
    }

    @Test func aLoadedRoomAnswersFromMemory() throws {
        var t = try loaded(Self.history(1...5))
        #expect(t.poll(room: Self.room, past: 2, limit: 2, now: t0) == .answer(Self.messages(3...4)))
        #expect(t.poll(room: Self.room, past: 0, limit: 3, now: t0) == .answer(Self.messages(3...5)))
        #expect(t.poll(room: Self.room, past: 0, limit: 50, now: t0) == .answer(Self.messages(1...5)))
        #expect(t.poll(room: Self.room, past: 5, limit: 10, now: t0) == .answer([]))
        #expect(t.poll(room: Self.room, past: 9, limit: 10, now: t0) == .answer([]))
    }

    @Test func anEmptyRoomAnswersNothingUntilItsFirstMessage() throws {
        var t = try loaded(Self.emptyHistory)
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: t0) == .answer([]))
        #expect(t.messageArrived(Self.message(1)) == .kept)
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: t0) == .answer([Self.message(1)]))
    }

    @Test func olderThanTheTimelineKeepsIsReadThroughToTheMessagingService() throws {
        // Capacity 10 over 30 messages: the timeline holds 21…30.
        var t = try loaded(Self.history(1...30), capacity: 10)
        #expect(t.poll(room: Self.room, past: 5, limit: 3, now: t0) == .readThrough(after: 5, limit: 3))
        #expect(t.poll(room: Self.room, past: 0, limit: 11, now: t0) == .readThrough(after: nil, limit: 11))
        #expect(t.poll(room: Self.room, past: 20, limit: 3, now: t0) == .answer(Self.messages(21...23)))
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: t0) == .answer(Self.messages(21...30)))
    }

    @Test func eventsArrivingDuringTheLoadAreBufferedAndAppliedAfterTheHistory() throws {
        var t = timelines()
        let load = try #require(startLoad(&t, at: t0))
        // 5 is in the history too; 6 and 7 came after it was read.
        #expect(t.messageArrived(Self.message(5)) == .kept)
        #expect(t.messageArrived(Self.message(6)) == .kept)
        #expect(t.messageArrived(Self.message(7)) == .kept)
        #expect(t.poll(room: Self.room, past: 5, limit: 10, now: t0) == .waitForLoad(load))
        #expect(t.historyLoaded(Self.history(1...5), by: load, now: t0) == .loaded(fillGap: false))
        #expect(t.poll(room: Self.room, past: 4, limit: 10, now: t0) == .answer(Self.messages(5...7)))
    }

    @Test func aBufferedMessageAboveTheHistoryLeavesAGapThatIsFilledBeforeItIsShown() throws {
        var t = timelines()
        let load = try #require(startLoad(&t, at: t0))
        #expect(t.messageArrived(Self.message(8)) == .kept)
        #expect(t.historyLoaded(Self.history(1...5), by: load, now: t0) == .loaded(fillGap: true))
        #expect(t.poll(room: Self.room, past: 5, limit: 10, now: t0) == .answer([]), "8 must wait for 6 and 7")
        #expect(t.nextGapFetch(Self.room) == .fetch(after: 5, limit: 20))
        t.gapFetched(Self.messages(6...8), room: Self.room)
        #expect(t.nextGapFetch(Self.room) == .finished)
        #expect(t.poll(room: Self.room, past: 5, limit: 10, now: t0) == .answer(Self.messages(6...8)))
    }

    @Test func anUnknownRoomAnswers404ForAWhileThenIsAskedAboutAgain() throws {
        var t = timelines()
        let load = try #require(startLoad(&t, at: t0))
        t.historyFailed(.noSuchChat, by: load, now: t0)
        #expect(t.roomCount == 1)
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: t0 + .milliseconds(1999)) == .noSuchRoom)
        let again = try #require(startLoad(&t, at: t0 + .seconds(2)))
        #expect(again != load)
        #expect(t.historyLoaded(Self.history(1...2), by: again, now: t0 + .seconds(2)) == .loaded(fillGap: false))
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: t0 + .seconds(2)) == .answer(Self.messages(1...2)))
    }

    @Test func anyOtherLoadFailureForgetsTheRoomSoTheNextPollLoadsAgain() throws {
        var t = timelines()
        let load = try #require(startLoad(&t, at: t0))
        t.historyFailed(.unavailable, by: load, now: t0)
        #expect(t.roomCount == 0)
        let again = try #require(startLoad(&t, at: t0))
        #expect(again != load)
    }

    @Test func messagesOfRoomsNotHeldAreNotKept() throws {
        var t = timelines()
        #expect(t.messageArrived(Self.message(1, room: 3)) == .kept)
        #expect(t.roomCount == 0)
        // A room loaded afterwards starts from its history, not from that event.
        let load = try #require(startLoad(&t, room: 3, at: t0))
        #expect(t.historyLoaded(Self.emptyHistory.with(room: 3), by: load, now: t0) == .loaded(fillGap: false))
        #expect(t.poll(room: 3, past: 0, limit: 10, now: t0) == .answer([]))
    }

    // MARK: Gaps in the event stream

    @Test func aGapIsFilledFromTheMessagingServiceBeforeAnythingAboveItIsShown() throws {
        var t = try loaded(Self.history(1...5))
        #expect(t.messageArrived(Self.message(7)) == .fillGap(Self.room))
        #expect(t.messageArrived(Self.message(9)) == .kept, "one fill per room at a time")
        #expect(t.poll(room: Self.room, past: 5, limit: 10, now: t0) == .answer([]))
        #expect(t.nextGapFetch(Self.room) == .fetch(after: 5, limit: 20))
        // The messaging service answered only 6: 7 follows from what was pending, 9 still waits for 8.
        t.gapFetched([Self.message(6)], room: Self.room)
        #expect(t.poll(room: Self.room, past: 5, limit: 10, now: t0) == .answer(Self.messages(6...7)))
        #expect(t.nextGapFetch(Self.room) == .fetch(after: 7, limit: 20))
        t.gapFetched(Self.messages(8...9), room: Self.room)
        #expect(t.nextGapFetch(Self.room) == .finished)
        #expect(t.poll(room: Self.room, past: 7, limit: 10, now: t0) == .answer(Self.messages(8...9)))
        // The fill is over, so the next gap starts another.
        #expect(t.messageArrived(Self.message(11)) == .fillGap(Self.room))
    }

    @Test func aGapFillWaitsLongerAfterEachFailureAndNeverGivesUp() throws {
        var t = try loaded(Self.history(1...5))
        #expect(t.messageArrived(Self.message(7)) == .fillGap(Self.room))
        for attempt in 1...80 {
            #expect(t.nextGapFetch(Self.room) == .fetch(after: 5, limit: 20))
            #expect(t.gapFetchFailed(Self.room) == min(.milliseconds(100 * attempt), RoomTimelines.maxGapFetchDelay))
        }
        #expect(t.poll(room: Self.room, past: 5, limit: 10, now: t0) == .answer([]), "7 is still held back")
        #expect(t.messageArrived(Self.message(8)) == .kept, "the fill is still under way")
        // An answer that moves nothing counts as a failure too.
        #expect(t.nextGapFetch(Self.room) == .fetch(after: 5, limit: 20))
        t.gapFetched([], room: Self.room)
        #expect(t.gapFetchDelay(Self.room) == RoomTimelines.maxGapFetchDelay)
        #expect(t.nextGapFetch(Self.room) == .fetch(after: 5, limit: 20))
        t.gapFetched([Self.message(6)], room: Self.room)
        #expect(t.gapFetchDelay(Self.room) == .zero, "progress: the next fetch at once")
        #expect(t.nextGapFetch(Self.room) == .finished)
        #expect(t.poll(room: Self.room, past: 5, limit: 10, now: t0) == .answer(Self.messages(6...8)))
        #expect(t.counts.gapsByEvent == 1)
        #expect(t.counts.fetchFailures == 81)
    }

    // MARK: Head checks

    /// The last message of a quiet room whose event never reached this gateway:
    /// no later message reveals it, the owner's head does, at the second check
    /// that still finds it above ours (the first may see an event on its way).
    @Test func aHeadStillAboveOursAtTheNextCheckIsAGapFilledLikeAnyOther() throws {
        var t = try loaded(Self.history(1...5))
        #expect(t.roomsToCheck(polledSince: t0) == [Self.room])
        #expect(t.roomsToCheck(polledSince: t0 + .seconds(1)) == [], "nobody polled it since")
        #expect(t.headsRead([RoomHead(room: Self.room, head: 5)]) == [])
        #expect(t.suspectedRooms == [])
        #expect(t.headsRead([RoomHead(room: Self.room, head: 6)]) == [], "maybe its event is on its way")
        #expect(t.suspectedRooms == [Self.room], "read again soon, alone")
        #expect(t.messageArrived(Self.message(6)) == .kept)
        #expect(t.headsRead([RoomHead(room: Self.room, head: 7)]) == [], "6 came; 7 may be on its way")
        #expect(t.headsRead([RoomHead(room: Self.room, head: 8)]) == [Self.room], "7 did not come")
        #expect(t.counts.gapsByHead == 1)
        #expect(t.poll(room: Self.room, past: 5, limit: 10, now: t0) == .answer([Self.message(6)]))
        #expect(t.nextGapFetch(Self.room) == .fetch(after: 6, limit: 20))
        t.gapFetched(Self.messages(7...8), room: Self.room)
        #expect(t.nextGapFetch(Self.room) == .finished)
        #expect(t.poll(room: Self.room, past: 6, limit: 10, now: t0) == .answer(Self.messages(7...8)))
    }

    /// Messages beyond the pending bound are not kept, but not forgotten either:
    /// the room stays in a gap until the fill has brought them.
    @Test func messagesBeyondThePendingBoundAreCountedAndFilled() throws {
        var t = try loaded(Self.history(1...5))
        #expect(t.messageArrived(Self.message(7)) == .fillGap(Self.room))
        let top = MessageID(11 + Int64(RoomTimeline.maxPending))
        for id in 8...top { _ = t.messageArrived(Self.message(id)) }
        #expect(t.counts.overflowed == 5)
        #expect(t.nextGapFetch(Self.room) == .fetch(after: 5, limit: 20))
        t.gapFetched([Self.message(6)], room: Self.room)
        #expect(t.nextGapFetch(Self.room) == .fetch(after: top - 5, limit: 20), "the dropped ones are fetched")
        t.gapFetched(Self.messages((top - 4)...top), room: Self.room)
        #expect(t.nextGapFetch(Self.room) == .finished)
        #expect(t.poll(room: Self.room, past: top - 1, limit: 10, now: t0) == .answer([Self.message(top)]))
    }

    @Test func aGapFillEndsWhenItsRoomIsRemoved() throws {
        var t = try loaded(Self.history(1...5))
        #expect(t.messageArrived(Self.message(7)) == .fillGap(Self.room))
        t.remove([Self.room], now: t0)
        #expect(t.nextGapFetch(Self.room) == .finished)
    }

    @Test func aGapFillThatWasNeverStartedFetchesNothing() throws {
        var t = try loaded(Self.history(1...5))
        #expect(t.nextGapFetch(Self.room) == .finished)
        _ = t.messageArrived(Self.message(6))
        #expect(t.nextGapFetch(Self.room) == .finished)
    }

    // MARK: Removal

    @Test func aRemovedRoomAnswers404ForTheRemovedMemoryThenAsksTheServicesAgain() throws {
        var t = try loaded(Self.history(1...5))
        let removedAt = t0 + .seconds(1)
        t.remove([Self.room], now: removedAt)
        #expect(t.roomCount == 1)
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: removedAt) == .noSuchRoom)
        #expect(t.messageArrived(Self.message(6)) == .kept)
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: removedAt + .seconds(299)) == .noSuchRoom)
        guard case .startLoad(let load, _) = t.poll(room: Self.room, past: 0, limit: 10, now: removedAt + .seconds(300))
        else {
            Issue.record("after the removed memory the services are asked again")
            return
        }
        #expect(load.room == Self.room)
    }

    /// A say to a room this gateway saw removed is refused before it is sent
    /// (`ChatActions`): held or not, a removal is known for the removed memory.
    @Test func aRemovalIsKnownWhetherOrNotTheRoomWasHeld() throws {
        var t = try loaded(Self.history(1...5))
        let elsewhere = RoomID(Self.room.rawValue + 1)
        #expect(!t.knowsRemoved(Self.room, now: t0) && !t.knowsRemoved(elsewhere, now: t0))
        t.remove([Self.room, elsewhere], now: t0)
        #expect(t.knowsRemoved(Self.room, now: t0 + .seconds(1)), "a room it held")
        #expect(t.knowsRemoved(elsewhere, now: t0 + .seconds(1)), "a room it never held")
        #expect(!t.knowsRemoved(RoomID(Self.room.rawValue + 2), now: t0 + .seconds(1)))
    }

    @Test func aRoomRemovedWhileItLoadsStaysRemoved() throws {
        var t = timelines()
        let load = try #require(startLoad(&t, at: t0))
        t.remove([Self.room], now: t0)
        #expect(t.historyLoaded(Self.history(1...5), by: load, now: t0) == .stale)
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: t0 + .seconds(1)) == .noSuchRoom)
    }

    @Test func aFailedLoadOfARoomRemovedMeanwhileKeepsItRemovedNotMerelyAbsent() throws {
        var t = timelines()
        let load = try #require(startLoad(&t, at: t0))
        t.remove([Self.room], now: t0)
        t.historyFailed(.noSuchChat, by: load, now: t0)
        // Absent would end after 2 s; removed lasts 300 s.
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: t0 + .seconds(10)) == .noSuchRoom)
    }

    @Test func aLoadThatReadTheHistoryBeforeTheRemovalCannotBringTheRoomBack() throws {
        // The removal reached this gateway before the room was polled here;
        // the messaging service still answered the history.
        var t = timelines()
        t.remove([12, Self.room, 3], now: t0)
        #expect(t.roomCount == 0, "rooms not held are remembered apart")
        let load = try #require(startLoad(&t, at: t0 + .seconds(1)))
        #expect(t.historyLoaded(Self.history(1...5), by: load, now: t0 + .seconds(1)) == .noSuchRoom)
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: t0 + .seconds(300)) == .noSuchRoom)
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: t0 + .seconds(301)) != .noSuchRoom)
    }

    @Test(arguments: [[3], [12, 3, 5], [1, 2, 4, 5, 6, 8, 9, 100]] as [[RoomID]])
    func onlyTheRoomsRemovedAreRefused(removed: [RoomID]) throws {
        var t = timelines()
        t.remove(removed, now: t0)
        for room in (1...12).map(RoomID.init) {
            let load = try #require(startLoad(&t, room: room, at: t0))
            let outcome = t.historyLoaded(Self.history(1...2, room: room), by: load, now: t0)
            #expect(outcome == (removed.contains(room) ? .noSuchRoom : .loaded(fillGap: false)), "room \(room)")
        }
    }

    @Test func removalsOfRoomsNotHeldAreForgottenAfterTheRemovedMemory() throws {
        var t = timelines()
        t.remove([Self.room], now: t0)
        t.evictIdle(now: t0 + .seconds(300))
        let load = try #require(startLoad(&t, at: t0 + .seconds(300)))
        #expect(t.historyLoaded(Self.history(1...5), by: load, now: t0 + .seconds(300)) == .loaded(fillGap: false))
    }

    @Test func theOutcomeOfALoadTheRoomNoLongerWaitsForIsIgnored() throws {
        var t = timelines()
        let old = try #require(startLoad(&t, at: t0))
        t.remove([Self.room], now: t0)
        let later = t0 + .seconds(300)
        let new = try #require(startLoad(&t, at: later))
        #expect(new != old)
        // The old load answers late, with an old history.
        #expect(t.historyLoaded(Self.history(1...3), by: old, now: later) == .stale)
        t.historyFailed(.noSuchChat, by: old, now: later)
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: later) == .waitForLoad(new))
        #expect(t.historyLoaded(Self.history(1...6), by: new, now: later) == .loaded(fillGap: false))
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: later) == .answer(Self.messages(1...6)))
    }

    // MARK: Eviction

    @Test func aRoomNobodyPollsIsDroppedAfterTheIdleTimeCountedFromItsLastPoll() throws {
        var t = try loaded(Self.history(1...5), at: t0)
        let polled = t0 + .seconds(100)
        #expect(t.poll(room: Self.room, past: 5, limit: 10, now: polled) == .answer([]))
        // Events do not count as polls.
        _ = t.messageArrived(Self.message(6))
        t.evictIdle(now: polled + .seconds(599))
        #expect(t.roomCount == 1)
        t.evictIdle(now: polled + .seconds(600))
        #expect(t.roomCount == 0)
        #expect(t.messageArrived(Self.message(7)) == .kept)
        #expect(t.roomCount == 0)
        #expect(startLoad(&t, at: polled + .seconds(600)) != nil)
    }

    @Test func aLoadUnderWayIsNeverEvicted() throws {
        var t = timelines()
        let load = try #require(startLoad(&t, at: t0))
        t.evictIdle(now: t0 + .seconds(100_000))
        #expect(t.roomCount == 1)
        #expect(t.historyLoaded(Self.history(1...2), by: load, now: t0 + .seconds(100_000)) == .loaded(fillGap: false))
    }

    @Test func remembered404sAreDroppedWhenTheyExpire() throws {
        var t = timelines()
        let unknown = try #require(startLoad(&t, room: 1, at: t0))
        t.historyFailed(.noSuchChat, by: unknown, now: t0)
        t.remove([Self.room], now: t0)  // not held: remembered apart, not counted
        _ = try #require(startLoad(&t, room: 2, at: t0))
        t.remove([2], now: t0)
        #expect(t.roomCount == 2)
        t.evictIdle(now: t0 + .milliseconds(1999))
        #expect(t.roomCount == 2)
        t.evictIdle(now: t0 + .seconds(2))
        #expect(t.roomCount == 1, "the absent room went, the removed one stays")
        t.evictIdle(now: t0 + .seconds(300))
        #expect(t.roomCount == 0)
    }

    // MARK: The polling contract, end to end

    /// A room is written to while its events arrive late, out of order, or
    /// not at all; a poller that only remembers the highest id it saw loads
    /// the room, waits, reads past the window, and must see every message
    /// once, in order, each answer contiguous from its `past + 1`.
    @Test(arguments: 0..<40 as Range<UInt64>)
    func aPollerThatRemembersOnlyItsHighestIdNeverMissesAMessage(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let total: MessageID = 150
        var database: [ChatMessage] = []  // PostgreSQL: every committed message, gap-free
        var inFlight: [ChatMessage] = []  // events not delivered yet
        var t = timelines(capacity: 20)
        var pendingLoad: (RoomTimelines.Load, MessageHistory)?
        var gapFill = false
        var seen: [ChatMessage] = []
        var past: MessageID = 0
        var violations: [String] = []

        func readDatabase(after: MessageID?, limit: Int) -> [ChatMessage] {
            guard let after else { return Array(database.suffix(limit)) }
            return Array(database.filter { $0.id > after }.prefix(limit))
        }
        func take(_ answer: [ChatMessage]) {
            // Until it saw something the poller asks for the latest (past=0),
            // which may start anywhere; from then on each answer starts at past + 1.
            if !seen.isEmpty, let first = answer.first, first.id != past + 1 {
                violations.append("poll past \(past) answered from \(first.id)")
            }
            for (a, b) in zip(answer, answer.dropFirst()) where b.id != a.id + 1 {
                violations.append("answer not contiguous: \(a.id) then \(b.id)")
            }
            seen += answer
            past = seen.last?.id ?? 0
        }
        func poll() {
            let limit = Int(random.next(upTo: 30)) + 1
            switch t.poll(room: Self.room, past: past, limit: limit, now: t0) {
            case .answer(let messages): take(messages)
            case .readThrough(let after, let limit): take(readDatabase(after: after, limit: limit))
            case .startLoad(let load, let limit):
                pendingLoad = (
                    load,
                    MessageHistory(
                        room: Self.room, head: database.last?.id ?? 0, messages: readDatabase(after: nil, limit: limit))
                )
            case .waitForLoad: break
            case .noSuchRoom: violations.append("404 for a room that exists")
            }
        }
        func deliver(_ message: ChatMessage) {
            if t.messageArrived(message) == .fillGap(Self.room) { gapFill = true }
        }
        func fillGap() {
            while gapFill {
                switch t.nextGapFetch(Self.room) {
                case .fetch(let after, let limit):
                    t.gapFetched(readDatabase(after: after, limit: limit), room: Self.room)
                case .finished: gapFill = false
                }
            }
        }

        for id in 1...total {
            database.append(Self.message(id))
            // One event in ten is lost, except the last one's (a gap is only
            // found when a later message arrives).
            if id == total || random.next(upTo: 10) != 0 { inFlight.append(Self.message(id)) }
            for _ in 0..<Int(random.next(upTo: 3)) where !inFlight.isEmpty {
                deliver(inFlight.remove(at: Int(random.next(upTo: UInt64(inFlight.count)))))
            }
            if case (let load, let history)? = pendingLoad, random.next(upTo: 3) == 0 {
                pendingLoad = nil
                if t.historyLoaded(history, by: load, now: t0) == .loaded(fillGap: true) { gapFill = true }
            }
            if gapFill, random.next(upTo: 4) == 0 { fillGap() }
            if random.next(upTo: 2) == 0 { poll() }
        }
        // The writers stopped: every surviving event arrives, loads and fills finish.
        for _ in 0..<100 where past != total {
            if case (let load, let history)? = pendingLoad {
                pendingLoad = nil
                if t.historyLoaded(history, by: load, now: t0) == .loaded(fillGap: true) { gapFill = true }
            }
            while !inFlight.isEmpty { deliver(inFlight.removeFirst()) }
            fillGap()
            poll()
        }

        #expect(violations == [])
        let start = try #require(seen.first?.id, "the poller saw messages")
        #expect(seen == Array(database.drop { $0.id < start }), "seed \(seed)")
        #expect(seen.last?.id == total)
    }
}

extension MessageHistory {
    func with(room: RoomID) -> MessageHistory { MessageHistory(room: room, head: head, messages: messages) }
}
