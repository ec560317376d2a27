import GeoChatDomain
import GeoChatTestSupport
import Testing

@testable import GatewayCore

/// Removed messages in a timeline: a tombstone keeps the id's place (the run
/// stays gap-free), reads never show it and never stall on it, and the
/// removals that arrive are kept for push subscribers.
@Suite struct RoomTimelineRemovalTests {
    typealias T = RoomTimelineTests

    static func ids(_ read: RoomTimeline.Read) -> [MessageID]? { T.shown(read)?.map(\.id) }

    @Test func aTombstoneIsNeverShownAndLimitCountsTheRest() {
        var t = T.timeline(1...10)
        t.apply(T.message(9).tombstone)
        t.apply(T.message(5).tombstone)
        #expect(Self.ids(t.read(past: 0, limit: 3)) == [7, 8, 10])
        #expect(Self.ids(t.read(past: 4, limit: 3)) == [6, 7, 8])
        #expect(Self.ids(t.read(past: 8, limit: 5)) == [10])
        #expect(Self.ids(t.read(past: 0, limit: 50)) == [1, 2, 3, 4, 6, 7, 8, 10], "the whole history")
        #expect(t.head == 10)
    }

    @Test func aPollerPastARunOfTombstonesStillGetsWhatFollows() {
        var t = T.timeline(1...30)
        for id in MessageID(3)...25 { t.apply(T.message(id).tombstone) }
        // A phone at past 2 asking for 5: not stuck on 23 removed messages.
        #expect(Self.ids(t.read(past: 2, limit: 5)) == [26, 27, 28, 29, 30])
        #expect(Self.ids(t.read(past: 30, limit: 5)) == [])
    }

    @Test func fewerShownThanAskedReadsThroughUnlessTheWholeHistoryIsHere() {
        var partial = T.timeline(101...110)
        partial.apply(T.message(110).tombstone)
        #expect(partial.read(past: 0, limit: 10) == .needsHistory, "older messages may make up the count")
        #expect(Self.ids(partial.read(past: 0, limit: 9)) == Array(MessageID(101)...109))
        var whole = T.timeline(1...5)
        whole.apply(T.message(5).tombstone)
        #expect(Self.ids(whole.read(past: 0, limit: 10)) == [1, 2, 3, 4])
    }

    @Test func aClearedRoomIsAnsweredFromMemoryOnceAReadThroughShowedNothingBelow() {
        var t = T.timeline(101...110)
        for id in MessageID(101)...110 { t.apply(T.message(id).tombstone) }
        #expect(t.read(past: 0, limit: 5) == .needsHistory, "older messages may be shown")
        // The owner's answer: nothing shown at all (or only what the window holds).
        t.nothingShownBelow(firstShown: nil, readHead: 110)
        #expect(Self.ids(t.read(past: 0, limit: 5)) == [])
        #expect(Self.ids(t.read(past: 3, limit: 5)) == [], "a phone far behind: nothing to read below either")
        t.apply(T.message(111))
        #expect(Self.ids(t.read(past: 0, limit: 5)) == [111])
        #expect(Self.ids(t.read(past: 50, limit: 5)) == [111])
        var older = T.timeline(101...110)
        older.nothingShownBelow(firstShown: 42, readHead: 110)
        #expect(older.read(past: 0, limit: 20) == .needsHistory, "message 42 below the window is shown")
        var stale = T.timeline(101...110)
        stale.nothingShownBelow(firstShown: nil, readHead: 90)
        #expect(stale.read(past: 0, limit: 20) == .needsHistory, "a read that did not reach the window proves nothing")
    }

    /// A removal's event says where the room's shown messages start (`MessageStored.shownFrom`): a
    /// cleared room is answered from memory at once, with no read of PostgreSQL to learn it is empty.
    @Test func aRemovalsEventThatNothingIsShownBelowKeepsReadsInMemory() {
        var cleared = T.timeline(101...110)
        for id in MessageID(101)...110 { cleared.apply(T.message(id).tombstone) }
        cleared.nothingShown(below: 111)
        #expect(Self.ids(cleared.read(past: 0, limit: 5)) == [], "every message removed: nothing to show")
        var tail = T.timeline(101...110)
        for id in MessageID(101)...105 { tail.apply(T.message(id).tombstone) }
        tail.nothingShown(below: 106)
        #expect(Self.ids(tail.read(past: 0, limit: 20)) == [106, 107, 108, 109, 110], "the rest is all there is")
        #expect(Self.ids(tail.read(past: 50, limit: 3)) == [106, 107, 108], "a phone far behind reads it too")
        var below = T.timeline(101...110)
        for id in MessageID(101)...110 { below.apply(T.message(id).tombstone) }
        below.nothingShown(below: 60)
        #expect(below.read(past: 0, limit: 5) == .needsHistory, "message 60, below the window, may be shown")
        // The window moves on past what was said: the claim no longer covers all below it.
        var moving = T.timeline(101...110, capacity: 10)
        moving.nothingShown(below: 101)
        for id in MessageID(111)...116 { moving.apply(T.message(id)) }
        #expect(moving.read(past: 0, limit: 20) == .needsHistory, "trimmed messages below the window are shown")
    }

    /// A history whose owner's count of removals covers every id below what it holds: nothing below
    /// is shown, so a cleared room loaded again answers from memory without a read-through.
    @Test func aLoadedHistoryThatCountsEveryIDBelowAsRemovedNeedsNoReadThrough() {
        var read = RoomTimelineTests.messages(101...110)
        for i in 0..<10 { read[i] = read[i].tombstone }
        let cleared = RoomTimeline(
            history: MessageHistory(room: 1, head: 110, messages: read, removed: 110), capacity: 100)
        #expect(Self.ids(cleared.read(past: 0, limit: 5)) == [])
        let short = RoomTimeline(
            history: MessageHistory(room: 1, head: 110, messages: read, removed: 109), capacity: 100)
        #expect(short.read(past: 0, limit: 5) == .needsHistory, "one id below may be shown")
        let unknown = RoomTimeline(history: MessageHistory(room: 1, head: 110, messages: read), capacity: 100)
        #expect(unknown.read(past: 0, limit: 5) == .needsHistory, "an owner that does not count: read")
    }

    @Test func aRemovalIsFinalWhateverTheOrderOfArrival() {
        var t = T.timeline(1...3)
        // The tombstone of 5 arrives before 4 and 5 themselves.
        t.apply(T.message(5).tombstone)
        t.apply(T.message(4))
        t.apply(T.message(5))
        #expect(t.head == 5)
        #expect(Self.ids(t.read(past: 3, limit: 5)) == [4])
        // The message again after its tombstone (an outbox relay's second announcement): still removed.
        t.apply(T.message(2).tombstone)
        t.apply(T.message(2))
        #expect(Self.ids(t.read(past: 0, limit: 5)) == [1, 3, 4])
    }

    @Test func aLoadedHistoryMayHoldTombstones() {
        var messages = T.messages(1...4)
        messages[1] = messages[1].tombstone
        let t = RoomTimeline(history: MessageHistory(room: 1, head: 4, messages: messages), capacity: 200)
        #expect(Self.ids(t.read(past: 0, limit: 10)) == [1, 3, 4])
        #expect(t.head == 4)
        #expect(!t.hasGap)
    }

    @Test func subscribersLearnTheRemovalsSinceTheirCursor() {
        var t = RoomTimeline(
            history: MessageHistory(room: 1, head: 5, messages: T.messages(1...5)), capacity: 200, epoch: 7)
        let (none, start) = t.removals(since: nil)
        #expect(none.isEmpty, "a new subscriber starts where things stand")
        t.apply(T.message(2).tombstone)
        t.apply(T.message(4).tombstone)
        let (first, next) = t.removals(since: start)
        #expect(first == [2, 4])
        #expect(t.removals(since: next).ids.isEmpty)
        t.apply(T.message(1).tombstone)
        #expect(t.removals(since: next).ids == [1])
        // A cursor of an earlier timeline of the room (evicted, loaded again): all that is kept.
        #expect(t.removals(since: RemovalCursor(epoch: 3, count: 1)).ids == [1, 2, 4])
    }

    /// A subscriber resuming after a disconnection, or one whose room was read again (a head check
    /// found a removal no event told), learns the removals the window's history carries too.
    @Test func aResumingSubscriberLearnsTheRemovalsTheHistoryBrought() {
        var t = RoomTimeline(
            history: MessageHistory(
                room: 1, head: 5, messages: [T.message(1), T.message(2).tombstone] + T.messages(3...5)),
            capacity: 200, epoch: 8)
        t.apply(T.message(4).tombstone)
        let (all, next) = t.removals(since: .resuming)
        #expect(all == [2, 4])
        #expect(t.removals(since: next).ids.isEmpty)
        #expect(t.removals(since: nil).ids.isEmpty, "a new subscriber was sent none of them")
    }

    @Test func trimmingKeepsTheTombstoneCountRight() {
        var t = T.timeline(nil, capacity: 4)
        for id in MessageID(1)...6 { t.apply(id == 2 ? T.message(id).tombstone : T.message(id)) }
        // The window was trimmed past the tombstone: plain reads again.
        #expect(Self.ids(t.read(past: 2, limit: 10)) == [3, 4, 5, 6])
        t.apply(T.message(5).tombstone)
        #expect(Self.ids(t.read(past: 2, limit: 10)) == [3, 4, 6])
    }

    @Test func theRemovalsKnownStartAtTheOwnersCountAndGrowByWhatIsNew() {
        var t = RoomTimeline(
            history: MessageHistory(room: 1, head: 5, messages: T.messages(1...5), removed: 3), capacity: 200)
        #expect(t.removedKnown == 3)
        t.apply(T.message(2).tombstone)
        t.apply(T.message(2).tombstone)
        #expect(t.removedKnown == 4, "a second copy of a removal is not a second removal")
        t.apply(T.message(7).tombstone)
        t.apply(T.message(7).tombstone)
        t.apply(T.message(6).tombstone)
        #expect(t.removedKnown == 6, "ahead of a gap, or just above the head: new")
        #expect(t.head == 7)
    }
}

/// The head check's second number: a removal whose event never came.
@Suite struct RemovalHeadCheckTests {
    static let room: RoomID = 1

    static func loaded(removed: Int64) -> RoomTimelines {
        var t = RoomTimelines()
        let now = ContinuousClock.now
        guard case .startLoad(let load, _) = t.poll(room: room, past: 0, limit: 10, now: now) else {
            Issue.record("no load")
            return t
        }
        _ = t.historyLoaded(
            MessageHistory(room: room, head: 3, messages: RoomTimelineTests.messages(1...3), removed: removed),
            by: load,
            now: now)
        return t
    }

    @Test func aCountAboveOursTwiceInARowReadsTheRoomAgainWhileItsPollsGoOn() throws {
        var t = Self.loaded(removed: 1)
        #expect(t.headsRead([RoomHead(room: Self.room, head: 3, removed: 1)]) == [])
        #expect(t.reloadsByHeadCheck.isEmpty)
        #expect(t.headsRead([RoomHead(room: Self.room, head: 3, removed: 2)]) == [], "maybe its event is on its way")
        #expect(t.suspectedRooms == [Self.room])
        #expect(t.reloadsByHeadCheck.isEmpty)
        #expect(t.headsRead([RoomHead(room: Self.room, head: 3, removed: 2)]) == [])
        let reload = try #require(t.reloadsByHeadCheck.first, "it did not come: the room is read again")
        #expect(t.reloadsByHeadCheck.count == 1 && reload.room == Self.room)
        #expect(t.counts.removalsByHead == 1)
        _ = t.headsRead([RoomHead(room: Self.room, head: 3, removed: 2)])
        _ = t.headsRead([RoomHead(room: Self.room, head: 3, removed: 2)])
        #expect(t.reloadsByHeadCheck.isEmpty, "one read at a time")
        // Meanwhile polls are answered from memory, without waiting, and a new message is taken.
        let now = ContinuousClock.now
        #expect(!t.wouldLoad(Self.room, now: now))
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: now) == .answer(RoomTimelineTests.messages(1...3)))
        _ = t.messageArrived(RoomTimelineTests.message(4))
        let cursor = t.removals(of: Self.room, since: nil)?.next
        // The read: message 2 was removed; the message that came meanwhile is kept on top of it.
        var read = RoomTimelineTests.messages(1...3)
        read[1] = read[1].tombstone
        #expect(
            t.historyLoaded(MessageHistory(room: Self.room, head: 3, messages: read, removed: 2), by: reload, now: now)
                == .loaded(fillGap: false))
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: now).shownIDs == [1, 3, 4])
        #expect(t.removals(of: Self.room, since: cursor)?.ids == [2], "a push subscriber learns the removal")
        _ = t.headsRead([RoomHead(room: Self.room, head: 4, removed: 2)])
        _ = t.headsRead([RoomHead(room: Self.room, head: 4, removed: 2)])
        #expect(t.reloadsByHeadCheck.isEmpty && t.suspectedRooms.isEmpty, "the counts agree now")
    }

    @Test func aFailedReadIsAskedForAgainAtTheNextHeadCheck() throws {
        var t = Self.loaded(removed: 0)
        for _ in 0..<2 { _ = t.headsRead([RoomHead(room: Self.room, head: 3, removed: 1)]) }
        let first = try #require(t.reloadsByHeadCheck.first)
        t.historyFailed(.unavailable, by: first, now: .now)
        #expect(t.poll(room: Self.room, past: 0, limit: 10, now: .now) == .answer(RoomTimelineTests.messages(1...3)))
        _ = t.headsRead([RoomHead(room: Self.room, head: 3, removed: 1)])
        #expect(t.reloadsByHeadCheck.count == 1 && t.reloadsByHeadCheck.first != first)
    }

    @Test func aRemovalWhoseEventCameMeanwhileChangesNothing() {
        var t = Self.loaded(removed: 0)
        _ = t.headsRead([RoomHead(room: Self.room, head: 3, removed: 1)])
        _ = t.messageArrived(RoomTimelineTests.message(2).tombstone)
        _ = t.headsRead([RoomHead(room: Self.room, head: 3, removed: 1)])
        #expect(t.reloadsByHeadCheck.isEmpty)
        #expect(!t.wouldLoad(Self.room, now: .now))
        #expect(t.suspectedRooms.isEmpty)
    }
}

extension RoomTimelines.PollAction {
    /// The ids of an answer (nil for any other action).
    fileprivate var shownIDs: [MessageID]? {
        if case .answer(let messages) = self { return messages.map(\.id) }
        return nil
    }
}
