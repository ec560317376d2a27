import GeoChatDomain

/// The rules of the gateway's message read model: which rooms it holds, in what
/// state, and what to do next. No tasks, locks, I/O or clock reads: each input
/// takes the current instant and returns what the caller (`MessageReadModel`)
/// must carry out, so every transition can be tested on its own.
///
/// A room enters on its first poll: its latest messages are loaded from the
/// messaging service while the event stream (already positioned before the
/// load) buffers what arrives meanwhile. A gap in the stream (an event lost or
/// reordered) is filled from the messaging service before anything above it is
/// shown (`RoomTimeline`); a fill goes on, slower after each failure, until the
/// gap is closed or nobody polls the room any more. A message whose event this
/// gateway never got (and that no later message reveals) is found by the head
/// check: the owner's committed heads of the polled rooms, read every second;
/// a head still above ours at the next check is a gap. Rooms nobody polls are
/// dropped after a while. Every gap, overflow and fetch is counted (`counts`).
package struct RoomTimelines: Sendable {
    /// What the read model had to heal, since it started (for metrics).
    package struct Counts: Equatable, Sendable {
        /// Gaps revealed by a later event (or found when a load ended).
        package var gapsByEvent = 0
        /// Gaps found by the head check: a message whose event did not come.
        package var gapsByHead = 0
        /// Rooms loaded again because the head check found a removal whose event did not come.
        package var removalsByHead = 0
        /// Messages beyond the pending bound, left to the gap fill.
        package var overflowed = 0
        package var fetches = 0
        package var fetchFailures = 0
    }

    /// One load of a room's history. Numbered, so the outcome of a load the room
    /// no longer waits for (removed meanwhile, then asked for again) is ignored.
    package struct Load: Hashable, Sendable {
        package let room: RoomID
        package let number: UInt64
    }

    private enum Entry {
        case loading(Load, buffer: [ChatMessage])
        case loaded(RoomTimeline, lastPolled: ContinuousClock.Instant)
        /// No such room (answer 404) until the instant; then ask again.
        case absent(until: ContinuousClock.Instant)
        /// Removed: answer 404. Kept for `removedMemory` so a load racing the
        /// owners' removal cannot bring the room back; afterwards the services
        /// answer 404 themselves (the cold path), and memory stays bounded.
        case removed(until: ContinuousClock.Instant)
    }

    private var rooms: [RoomID: Entry] = [:]
    /// Rooms whose gap is being filled, with the failed fetches in a row.
    private var gapFills: [RoomID: Int] = [:]
    /// Committed heads above ours seen at the last head check; still above at
    /// the next one, they are gaps (not events on their way).
    private var suspectedHeads: [RoomID: MessageID] = [:]
    /// The same for the owners' counts of removed messages (`RoomHead.removed`).
    private var suspectedRemovals: [RoomID: Int64] = [:]
    /// The loads the latest head reading started: rooms read again in the background, their old
    /// timelines answering polls meanwhile (`historyLoaded` swaps them; their subscribers are woken).
    package private(set) var reloadsByHeadCheck: [Load] = []
    /// Rooms read again in the background, with the events that arrived since the read began.
    private var reloads: [RoomID: (load: Load, buffer: [ChatMessage])] = [:]
    package private(set) var counts = Counts()
    /// Rooms removed lately that were not in `rooms`, one sorted list per event
    /// (8 bytes a room: an expiry run removes up to millions). A load that read
    /// the history just before the owners' removal finished checks them.
    private var recentRemovals: [(until: ContinuousClock.Instant, rooms: [RoomID])] = []
    private var loadsStarted: UInt64 = 0

    package let capacity: Int
    package let idleEviction: Duration
    package let removedMemory: Duration
    /// How long an unknown room answers 404 before it is asked about again
    /// (ids are handed out upwards, so it may exist soon).
    package let absentMemory: Duration
    /// The longest wait between two fetches of a gap fill that keeps failing.
    package static let maxGapFetchDelay: Duration = .seconds(5)

    package init(
        capacity: Int = Limits.maxMessageLimit, idleEviction: Duration = .seconds(600),
        removedMemory: Duration = .seconds(600), absentMemory: Duration = .seconds(2)
    ) {
        self.capacity = capacity
        self.idleEviction = idleEviction
        self.removedMemory = removedMemory
        self.absentMemory = absentMemory
    }

    package var roomCount: Int { rooms.count }

    // MARK: Polls

    package enum PollAction: Equatable {
        case answer([ChatMessage])
        case noSuchRoom
        /// Older than what is kept: answer from the messaging service, which
        /// reads PostgreSQL, where ids are gap-free too, so the contract holds.
        case readThrough(after: MessageID?, limit: Int)
        /// Load the room's latest `limit` messages, report the outcome with
        /// `historyLoaded` or `historyFailed`, then poll again.
        case startLoad(Load, limit: Int)
        /// A load is under way: wait for its outcome, then poll again.
        case waitForLoad(Load)
    }

    package mutating func poll(room: RoomID, past: MessageID, limit: Int, now: ContinuousClock.Instant) -> PollAction {
        // One hash for the read and the poll's time (every poll comes here).
        guard let index = rooms.index(forKey: room) else { return startLoad(room) }
        switch rooms.values[index] {
        case .loaded(let timeline, _):
            rooms.values[index] = .loaded(timeline, lastPolled: now)
            switch timeline.read(past: past, limit: limit) {
            case .messages(let slice): return .answer(Array(slice))
            case .needsHistory: return .readThrough(after: past == 0 ? nil : past, limit: limit)
            }
        case .loading(let load, _):
            return .waitForLoad(load)
        case .absent(let until), .removed(let until):
            if now < until { return .noSuchRoom }
            return startLoad(room)
        }
    }

    /// Whether a poll of the room now would start loading it (changes nothing).
    package func wouldLoad(_ room: RoomID, now: ContinuousClock.Instant) -> Bool {
        switch rooms[room] {
        case .loaded?, .loading?: false
        case .absent(let until)?, .removed(let until)?: now >= until
        case nil: true
        }
    }

    /// Whether this gateway has seen the room's removal lately (its 404 memory;
    /// ids are never reused, so a removed room never comes back).
    package func knowsRemoved(_ room: RoomID, now: ContinuousClock.Instant) -> Bool {
        if case .removed(let until)? = rooms[room], now < until { return true }
        return recentlyRemoved(room)
    }

    private mutating func startLoad(_ room: RoomID) -> PollAction {
        loadsStarted += 1
        let load = Load(room: room, number: loadsStarted)
        rooms[room] = .loading(load, buffer: [])
        return .startLoad(load, limit: capacity)
    }

    // MARK: Load outcomes

    package enum LoadOutcome: Equatable {
        /// The room is loaded; `fillGap`: start a gap fill for it (`nextGapFetch`).
        case loaded(fillGap: Bool)
        /// The room was removed while it loaded: answer 404.
        case noSuchRoom
        /// The room no longer waits for this load; its waiters poll again.
        case stale
    }

    package mutating func historyLoaded(_ history: MessageHistory, by load: Load, now: ContinuousClock.Instant)
        -> LoadOutcome
    {
        if reloads[load.room]?.load == load { return reloaded(history, by: load) }
        guard case .loading(load, let buffer)? = rooms[load.room] else { return .stale }
        // A removal that arrived meanwhile wins over the history read before it.
        if recentlyRemoved(load.room) {
            rooms[load.room] = .removed(until: now + removedMemory)
            return .noSuchRoom
        }
        return install(history, then: buffer, by: load, lastPolled: now)
    }

    /// A background read of a loaded room (`reloadsByHeadCheck`) arrived: the history read and the
    /// events since replace the timeline, which answered polls until now.
    private mutating func reloaded(_ history: MessageHistory, by load: Load) -> LoadOutcome {
        guard let buffer = reloads.removeValue(forKey: load.room)?.buffer,
            case .loaded(_, let polled)? = rooms[load.room]
        else { return .stale }
        return install(history, then: buffer, by: load, lastPolled: polled)
    }

    /// The room's timeline from a history read and the events that arrived since the read began.
    private mutating func install(
        _ history: MessageHistory, then buffer: [ChatMessage], by load: Load, lastPolled: ContinuousClock.Instant
    ) -> LoadOutcome {
        var timeline = RoomTimeline(history: history, capacity: capacity, epoch: load.number)
        for message in buffer { timeline.apply(message) }
        counts.overflowed += timeline.overflowed
        rooms[load.room] = .loaded(timeline, lastPolled: lastPolled)
        let fill = timeline.hasGap && beginGapFill(load.room)
        if fill { counts.gapsByEvent += 1 }
        return .loaded(fillGap: fill)
    }

    /// The load failed; its waiters get `error`. An unknown room is remembered
    /// as absent for `absentMemory`; after any other failure the next poll loads again.
    /// A background read that failed is left: the next head check starts another.
    package mutating func historyFailed(_ error: ProtocolError, by load: Load, now: ContinuousClock.Instant) {
        if reloads[load.room]?.load == load {
            reloads[load.room] = nil
            return
        }
        guard case .loading(load, _)? = rooms[load.room] else { return }
        rooms[load.room] = error.code == .noSuchChat ? .absent(until: now + absentMemory) : nil
    }

    // MARK: Events

    package enum Arrival: Equatable {
        case kept
        /// A gap opened below the message: start a gap fill for the room.
        case fillGap(RoomID)
    }

    /// A message from the event stream (or one this gateway just posted).
    package mutating func messageArrived(_ message: ChatMessage, shownFrom: MessageID? = nil) -> Arrival {
        switch rooms[message.room] {
        case .loaded(var timeline, let polled)?:
            rooms[message.room] = nil  // the timeline is uniquely referenced while it changes
            let overflowed = timeline.overflowed
            let gap = timeline.apply(message)
            if let shownFrom { timeline.nothingShown(below: shownFrom) }
            reloads[message.room]?.buffer.append(message)
            counts.overflowed += timeline.overflowed - overflowed
            rooms[message.room] = .loaded(timeline, lastPolled: polled)
            guard gap && beginGapFill(message.room) else { return .kept }
            counts.gapsByEvent += 1
            return .fillGap(message.room)
        case .loading(let load, var buffer)?:
            rooms[message.room] = nil
            buffer.append(message)
            rooms[message.room] = .loading(load, buffer: buffer)
            return .kept
        case .absent?, .removed?, nil:
            return .kept  // nobody polls this room here, or it is gone
        }
    }

    /// A read-through of the room's latest `limit` (`readThrough(after: nil, …)`) answered `shown`, read
    /// up to `readHead`: fewer than asked means nothing else is shown, which the timeline keeps.
    package mutating func readThrough(_ room: RoomID, latest limit: Int, shown: [ChatMessage], readHead: MessageID) {
        guard shown.count < limit, case .loaded(var timeline, let polled)? = rooms[room] else { return }
        rooms[room] = nil  // uniquely referenced while it changes
        timeline.nothingShownBelow(firstShown: shown.first?.id, readHead: readHead)
        rooms[room] = .loaded(timeline, lastPolled: polled)
    }

    /// The message ids removed in a room held here since `cursor` (`RoomTimeline.removals(since:)`);
    /// nil when the room is not held (a subscriber's next read loads it, or answers 404).
    package func removals(of room: RoomID, since cursor: RemovalCursor?) -> (ids: [MessageID], next: RemovalCursor)? {
        guard case .loaded(let timeline, _)? = rooms[room] else { return nil }
        return timeline.removals(since: cursor)
    }

    /// The rooms were removed: answer 404 from now on.
    package mutating func remove(_ removed: [RoomID], now: ContinuousClock.Instant) {
        let until = now + removedMemory
        var notHere: [RoomID] = []
        for room in removed {
            if rooms[room] != nil { rooms[room] = .removed(until: until) } else { notHere.append(room) }
        }
        if !notHere.isEmpty { recentRemovals.append((until, notHere.sorted())) }
    }

    // MARK: Gap fills

    package enum GapFetch: Equatable {
        /// Read the room's messages after `after` and hand them to `gapFetched`
        /// (or report `gapFetchFailed`), then ask again.
        case fetch(after: MessageID, limit: Int)
        /// No gap left, or the room is gone or no longer held: the fill is over.
        case finished
    }

    package mutating func nextGapFetch(_ room: RoomID) -> GapFetch {
        guard gapFills[room] != nil, case .loaded(let timeline, _)? = rooms[room], timeline.hasGap else {
            gapFills[room] = nil
            return .finished
        }
        counts.fetches += 1
        return .fetch(after: timeline.head, limit: capacity)
    }

    /// A fetch's answer. One that moved nothing (the owner's answer ended below
    /// what is known) counts as a failure for the pace of the next fetch.
    package mutating func gapFetched(_ messages: [ChatMessage], room: RoomID) {
        let before = head(of: room)
        // The fill is registered, so these start no other one.
        for message in messages { _ = messageArrived(message) }
        if head(of: room) > before {
            if gapFills[room] != nil { gapFills[room] = 0 }
        } else if case .loaded(let timeline, _)? = rooms[room], timeline.hasGap {
            gapFetchFailed(room)
        }
    }

    /// A fetch failed; returns how long to wait before the next: longer after
    /// each failure in a row, up to `maxGapFetchDelay`.
    @discardableResult
    package mutating func gapFetchFailed(_ room: RoomID) -> Duration {
        let failures = (gapFills[room] ?? 0) + 1
        if gapFills[room] != nil { gapFills[room] = failures }
        counts.fetchFailures += 1
        return min(.milliseconds(100 * failures), Self.maxGapFetchDelay)
    }

    /// How long to wait before the next fetch of a room's fill (zero after progress).
    package func gapFetchDelay(_ room: RoomID) -> Duration {
        let failures = gapFills[room] ?? 0
        return failures == 0 ? .zero : min(.milliseconds(100 * failures), Self.maxGapFetchDelay)
    }

    private mutating func beginGapFill(_ room: RoomID) -> Bool {
        guard gapFills[room] == nil else { return false }
        gapFills[room] = 0
        return true
    }

    private func head(of room: RoomID) -> MessageID {
        if case .loaded(let timeline, _)? = rooms[room] { return timeline.head }
        return 0
    }

    // MARK: Head checks

    /// The loaded rooms polled since `polledSince`, whose owner's heads to read.
    package func roomsToCheck(polledSince: ContinuousClock.Instant) -> [RoomID] {
        rooms.compactMap { room, entry in
            guard case .loaded(_, let polled) = entry, polled >= polledSince else { return nil }
            return room
        }
    }

    /// The owners' committed heads, as read just now. A head above ours that was
    /// above it at the previous check too is a message this gateway did not get
    /// the event of: a gap, filled like any other. Returns the rooms whose fill
    /// to start.
    /// Rooms whose owner's head was above the timeline's at the latest reading:
    /// a second reading of these alone confirms or clears them.
    package var suspectedRooms: [RoomID] { Set(suspectedHeads.keys).union(suspectedRemovals.keys).sorted() }

    /// A count of removed messages above the timeline's at two readings in a row is a removal whose
    /// event this gateway did not get, or one below the window, which a timeline cannot count: the
    /// room is read again in the background (`reloadsByHeadCheck`), tombstones included, while its
    /// polls go on from memory.
    package mutating func headsRead(_ heads: [RoomHead]) -> [RoomID] {
        var fills: [RoomID] = []
        var suspected: [RoomID: MessageID] = [:]
        var suspectedRemoved: [RoomID: Int64] = [:]
        reloadsByHeadCheck = []
        for reading in heads {
            if case .loaded(let timeline, _)? = rooms[reading.room], reading.removed > timeline.removedKnown {
                if let earlier = suspectedRemovals[reading.room], earlier > timeline.removedKnown {
                    if reloads[reading.room] == nil {
                        loadsStarted += 1
                        let load = Load(room: reading.room, number: loadsStarted)
                        reloads[reading.room] = (load, [])
                        reloadsByHeadCheck.append(load)
                        counts.removalsByHead += 1
                    }
                }
                // Still suspected while read again: if the read fails, the next reading starts another.
                suspectedRemoved[reading.room] = reading.removed
            }
            guard case .loaded(var timeline, let polled)? = rooms[reading.room], reading.head > timeline.known else {
                continue
            }
            if let earlier = suspectedHeads[reading.room], earlier > timeline.known {
                rooms[reading.room] = nil  // uniquely referenced while it changes
                timeline.noteCommitted(head: earlier)
                rooms[reading.room] = .loaded(timeline, lastPolled: polled)
                counts.gapsByHead += 1
                if beginGapFill(reading.room) { fills.append(reading.room) }
            }
            suspected[reading.room] = reading.head
        }
        suspectedHeads = suspected
        suspectedRemovals = suspectedRemoved
        return fills
    }

    // MARK: Eviction

    /// Drops rooms nobody polled within `idleEviction`, and expired 404 answers.
    package mutating func evictIdle(now: ContinuousClock.Instant) {
        recentRemovals.removeAll { $0.until <= now }
        rooms = rooms.filter { _, entry in
            switch entry {
            case .loaded(_, let polled): now - polled < idleEviction
            case .absent(let until), .removed(let until): now < until
            case .loading: true
            }
        }
        reloads = reloads.filter { room, _ in
            if case .loaded? = rooms[room] { true } else { false }
        }
    }

    private func recentlyRemoved(_ room: RoomID) -> Bool {
        recentRemovals.contains { batch in
            var low = 0
            var high = batch.rooms.count
            while low < high {
                let mid = (low + high) / 2
                if batch.rooms[mid] < room { low = mid + 1 } else { high = mid }
            }
            return low < batch.rooms.count && batch.rooms[low] == room
        }
    }
}
