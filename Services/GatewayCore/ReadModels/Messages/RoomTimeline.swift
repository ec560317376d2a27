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
    package let capacity: Int
    /// Messages that arrived ahead of a gap and were not held (beyond
    /// `maxPending`); the gap fill brings them (they are above `head`, below `known`).
    package private(set) var overflowed = 0

    package static let maxPending = 1000

    package init(history: MessageHistory, capacity: Int) {
        self.capacity = capacity
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
    }

    package var hasGap: Bool { known > head }

    package enum Read: Equatable {
        case messages(ArraySlice<ChatMessage>)
        /// Older than what this timeline keeps: ask the messaging service.
        case needsHistory
    }

    /// `past = 0`: the latest `limit`, oldest first. Otherwise the oldest `limit` after `past`.
    package func read(past: MessageID, limit: Int) -> Read {
        if past >= head { return .messages([]) }
        guard let first = window.first else { return .needsHistory }
        if past == 0 {
            return window.count >= limit || holdsWholeHistory ? .messages(window.suffix(limit)) : .needsHistory
        }
        guard past + 1 >= first.id else { return .needsHistory }
        let start = Int(past + 1 - first.id)
        return .messages(window[start..<min(window.count, start + limit)])
    }

    /// Takes a message from the event stream or a backfill. Returns true while a
    /// gap remains below a message known to exist (the caller fetches the gap).
    @discardableResult
    package mutating func apply(_ message: ChatMessage) -> Bool {
        if message.id == head + 1 {
            append(message)
            while let next = pending.removeValue(forKey: head + 1) { append(next) }
        } else if message.id > head + 1 {
            known = max(known, message.id)
            if pending.count < Self.maxPending {
                pending[message.id] = message
            } else if pending[message.id] == nil {
                overflowed += 1
            }
        }
        known = max(known, head)
        return hasGap
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
        head = message.id
        // Trim in chunks so appends stay amortized O(1).
        if window.count > capacity + capacity / 2 {
            window.removeFirst(window.count - capacity)
            holdsWholeHistory = false
        }
    }
}
