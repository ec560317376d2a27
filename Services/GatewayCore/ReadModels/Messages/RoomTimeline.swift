import GeoChatDomain

/// The recent messages of one room as this gateway knows them.
///
/// The polling contract rests on one invariant: the timeline only ever reveals
/// a gap-free run of ids ending at `head`. Ids are dense per room (the messaging
/// service allocates them under a row lock), so a message that arrives ahead of
/// a missing one waits in `pending` until the gap is filled; it is never shown
/// before the messages below it. What is known to exist above the head (from
/// an event, held or not, or from the owner's committed head) stays a gap until
/// it is filled: nothing is dropped silently.
///
/// A removed message (an operator's removal) keeps its place as a tombstone,
/// so ids stay dense; reads leave tombstones out, `limit` counting what is
/// shown, and the removals that arrive are kept (`removals(since:)`) so that
/// push subscribers can take them off their screens.
package struct RoomTimeline: Sendable {
    /// Every id up to here is known; nothing above it is revealed.
    package private(set) var head: MessageID
    /// The highest id known to be committed (≥ `head`): above the head, a gap to fill.
    package private(set) var known: MessageID
    /// Ascending, gap-free, ending at `head` (empty when the room has no messages).
    package private(set) var window: [ChatMessage]
    /// Messages that arrived ahead of a gap, by id.
    private var pending: [MessageID: ChatMessage] = [:]
    /// True while `window` holds the room's whole history (it starts at id 1).
    package private(set) var holdsWholeHistory: Bool
    /// True while no message below `window` is shown (all of them removed: a spammer's room cleared),
    /// learned from a removal's event (`nothingShown(below:)`) or a read-through
    /// (`nothingShownBelow(firstShown:readHead:)`): reads then stay in memory.
    package private(set) var nothingShownBelowWindow = false
    package let capacity: Int
    /// Messages that arrived ahead of a gap and were not held (beyond
    /// `maxPending`); the gap fill brings them (they are above `head`, below `known`).
    package private(set) var overflowed = 0

    /// Tombstones in `window`: reads take the plain slice while there are none.
    private var tombstones = 0
    /// The ids of the latest removals that arrived, oldest first, at most `maxRemovals`.
    private var removedIDs: [MessageID] = []
    /// Every removal that arrived since the timeline was made (and the tombstones it was loaded with).
    private var removalCount = 0
    /// How many of the room's messages are known removed: the owner's count when the history was
    /// read, and each removal since of a message this timeline could tell was not removed before.
    /// The head check compares it with the owner's (`RoomHead.removed`).
    package private(set) var removedKnown: Int64
    /// Tells this timeline from an earlier one of the same room (a cursor of the earlier one starts over).
    package let epoch: UInt64

    package static let maxPending = 1000
    package static let maxRemovals = 1000

    package init(history: MessageHistory, capacity: Int, epoch: UInt64 = 0) {
        self.capacity = capacity
        self.epoch = epoch
        let messages = history.messages.suffix(capacity)
        let contiguous =
            messages.last?.id == history.head
            && zip(messages, messages.dropFirst()).allSatisfy { $0.id + 1 == $1.id }
        if contiguous {
            head = history.head
            window = Array(messages)
            holdsWholeHistory = history.head == 0 || messages.first?.id == 1
        } else {
            // Not a usable tail (cannot happen with dense ids): start empty at the head.
            head = history.head
            window = []
            holdsWholeHistory = history.head == 0
        }
        known = history.head
        tombstones = window.count { $0.removed }
        removedKnown = history.removed ?? 0
        // The owner's count is read before its messages (never high): if it covers every id below the
        // window, none of them is shown, and reads of a cleared room stay in memory from the start.
        if let removed = history.removed, let first = window.first,
            first.id.rawValue - 1 <= removed - Int64(tombstones)
        {
            nothingShownBelowWindow = true
        }
        // A subscriber of an earlier timeline of the room (evicted, or dropped by the head check) learns these.
        for message in window where message.removed { noteRemoval(message.id) }
    }

    package var hasGap: Bool { known > head }

    package enum Read: Equatable {
        case messages(ArraySlice<ChatMessage>)
        /// Older than what this timeline keeps: ask the messaging service.
        case needsHistory
    }

    /// `past = 0`: the latest `limit`, oldest first. Otherwise the oldest `limit` after `past`.
    /// Removed messages are left out; `limit` counts the others.
    package func read(past: MessageID, limit: Int) -> Read {
        if past >= head { return .messages([]) }
        guard let first = window.first else { return .needsHistory }
        if past == 0 {
            let complete = holdsWholeHistory || nothingShownBelowWindow
            if tombstones == 0 {
                return window.count >= limit || complete ? .messages(window.suffix(limit)) : .needsHistory
            }
            var shown: [ChatMessage] = []
            for message in window.reversed() where !message.removed {
                shown.append(message)
                if shown.count == limit { break }
            }
            return shown.count == limit || complete ? .messages(ArraySlice(shown.reversed())) : .needsHistory
        }
        guard past + 1 >= first.id || nothingShownBelowWindow else { return .needsHistory }
        let start = Int(max(past + 1, first.id) - first.id)
        if tombstones == 0 { return .messages(window[start..<min(window.count, start + limit)]) }
        return .messages(ArraySlice(window[start...].lazy.filter { !$0.removed }.prefix(limit)))
    }

    /// A read-through of the latest messages answered fewer than it asked for: those are every message
    /// shown up to `readHead`. If none is below the window (and the read reached the window), nothing
    /// below it is shown, and never will be (ids grow; removals only take away): polls stay in memory.
    package mutating func nothingShownBelow(firstShown: MessageID?, readHead: MessageID) {
        guard let first = window.first, first.id <= readHead + 1 else { return }
        if firstShown.map({ $0 >= first.id }) ?? true { nothingShownBelowWindow = true }
    }

    /// The owner says no message below `shownFrom` is shown, now or ever (a removal's event): if that
    /// covers everything below the window, reads stay in memory.
    package mutating func nothingShown(below shownFrom: MessageID) {
        guard let first = window.first, shownFrom >= first.id else { return }
        nothingShownBelowWindow = true
    }

    /// The ids removed since `cursor` (nil: none, only where things stand now),
    /// and the cursor to ask with next. A cursor of an earlier timeline of the
    /// room (`RemovalCursor.resuming` too), or one further behind than the
    /// removals kept, gets every removal known here: those kept, and the
    /// tombstones of the window (a reload's history brings removals no event told).
    package func removals(since cursor: RemovalCursor?) -> (ids: [MessageID], next: RemovalCursor) {
        let now = RemovalCursor(epoch: epoch, count: removalCount)
        guard let cursor else { return ([], now) }
        guard cursor.epoch == epoch, cursor.count <= removalCount else {
            let inWindow = tombstones > 0 ? window.lazy.filter(\.removed).map(\.id) : []
            return (Array(Set(removedIDs).union(inWindow)).sorted(), now)
        }
        return (Array(removedIDs.suffix(min(removalCount - cursor.count, removedIDs.count))), now)
    }

    /// Takes a message from the event stream or a backfill. Returns true while a
    /// gap remains below a message known to exist (the caller fetches the gap).
    /// A tombstone replaces the message wherever it is held; a message never
    /// replaces its tombstone (a removal is final, in whatever order they come).
    @discardableResult
    package mutating func apply(_ message: ChatMessage) -> Bool {
        if message.removed { noteRemoval(message.id) }
        if message.id <= head {
            if message.removed, let first = window.first, message.id >= first.id {
                let index = Int(message.id - first.id)
                if !window[index].removed {
                    window[index] = message
                    tombstones += 1
                    removedKnown += 1
                }
            }
            // An older message's removal: whether the owner's count has it already cannot be told here;
            // the head check finds out (and loads the room again if it differs).
        } else if message.id == head + 1 {
            if message.removed && pending[message.id]?.removed != true { removedKnown += 1 }
            append(pending.removeValue(forKey: message.id).flatMap { $0.removed ? $0 : nil } ?? message)
            while let next = pending.removeValue(forKey: head + 1) { append(next) }
        } else {
            known = max(known, message.id)
            if message.removed && pending[message.id]?.removed != true { removedKnown += 1 }
            if pending.count < Self.maxPending || pending[message.id] != nil {
                if pending[message.id]?.removed != true { pending[message.id] = message }
            } else {
                overflowed += 1
            }
        }
        known = max(known, head)
        return hasGap
    }

    private mutating func noteRemoval(_ id: MessageID) {
        removalCount += 1
        removedIDs.append(id)
        if removedIDs.count > Self.maxRemovals + Self.maxRemovals / 2 {
            removedIDs.removeFirst(removedIDs.count - Self.maxRemovals)
        }
    }

    /// The owner's committed head: anything above ours is a gap to fill (a
    /// message whose event this gateway did not get). Returns `hasGap`.
    @discardableResult
    package mutating func noteCommitted(head committed: MessageID) -> Bool {
        known = max(known, committed)
        return hasGap
    }

    private mutating func append(_ message: ChatMessage) {
        window.append(message)
        if message.removed { tombstones += 1 }
        head = message.id
        // Trim in chunks so appends stay amortized O(1).
        if window.count > capacity + capacity / 2 {
            let cut = window.count - capacity
            tombstones -= window[..<cut].count { $0.removed }
            window.removeFirst(cut)
            holdsWholeHistory = false
            nothingShownBelowWindow = false
        }
    }
}

/// Where a push subscriber stands in a room's removals (`RoomTimeline.removals(since:)`).
package struct RemovalCursor: Equatable, Sendable {
    package let epoch: UInt64
    package let count: Int

    /// A subscriber that resumes (`Last-Event-ID`) may hold any message up to its last id, removed
    /// while it was away: it is told every removal known here (no timeline has this epoch).
    package static let resuming = RemovalCursor(epoch: .max, count: 0)
}
