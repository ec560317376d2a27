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
/// shown (`RoomTimeline`). Rooms nobody polls are dropped after a while.
struct RoomTimelines: Sendable {
    /// One load of a room's history. Numbered, so the outcome of a load the room
    /// no longer waits for (removed meanwhile, then asked for again) is ignored.
    struct Load: Hashable, Sendable {
        let room: RoomID
        let number: UInt64
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
    /// Rooms whose gap is being filled, with the fetches made so far.
    private var gapFills: [RoomID: Int] = [:]
    /// Rooms removed lately that were not in `rooms`, one sorted list per event
    /// (8 bytes a room: an expiry run removes up to millions). A load that read
    /// the history just before the owners' removal finished checks them.
    private var recentRemovals: [(until: ContinuousClock.Instant, rooms: [RoomID])] = []
    private var loadsStarted: UInt64 = 0

    let capacity: Int
    let idleEviction: Duration
    let removedMemory: Duration
    /// How long an unknown room answers 404 before it is asked about again
    /// (ids are handed out upwards, so it may exist soon).
    let absentMemory: Duration
    /// Fetches one gap fill makes before it gives up; the next message that
    /// finds the gap starts another.
    static let fetchesPerGapFill = 10

    init(
        capacity: Int = Limits.maxMessageLimit, idleEviction: Duration = .seconds(600),
        removedMemory: Duration = .seconds(600), absentMemory: Duration = .seconds(2)
    ) {
        self.capacity = capacity
        self.idleEviction = idleEviction
        self.removedMemory = removedMemory
        self.absentMemory = absentMemory
    }

    var roomCount: Int { rooms.count }

    // MARK: Polls

    enum PollAction: Equatable {
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

    mutating func poll(room: RoomID, past: MessageID, limit: Int, now: ContinuousClock.Instant) -> PollAction {
        switch rooms[room] {
        case .loaded(let timeline, _)?:
            rooms[room] = .loaded(timeline, lastPolled: now)
            switch timeline.read(past: past, limit: limit) {
            case .messages(let slice): return .answer(Array(slice))
            case .needsHistory: return .readThrough(after: past == 0 ? nil : past, limit: limit)
            }
        case .loading(let load, _)?:
            return .waitForLoad(load)
        case .absent(let until)?, .removed(let until)?:
            if now < until { return .noSuchRoom }
            return startLoad(room)
        case nil:
            return startLoad(room)
        }
    }

    private mutating func startLoad(_ room: RoomID) -> PollAction {
        loadsStarted += 1
        let load = Load(room: room, number: loadsStarted)
        rooms[room] = .loading(load, buffer: [])
        return .startLoad(load, limit: capacity)
    }

    // MARK: Load outcomes

    enum LoadOutcome: Equatable {
        /// The room is loaded; `fillGap`: start a gap fill for it (`nextGapFetch`).
        case loaded(fillGap: Bool)
        /// The room was removed while it loaded: answer 404.
        case noSuchRoom
        /// The room no longer waits for this load; its waiters poll again.
        case stale
    }

    mutating func historyLoaded(_ history: MessageHistory, by load: Load, now: ContinuousClock.Instant) -> LoadOutcome {
        guard case .loading(load, let buffer)? = rooms[load.room] else { return .stale }
        // A removal that arrived meanwhile wins over the history read before it.
        if recentlyRemoved(load.room) {
            rooms[load.room] = .removed(until: now + removedMemory)
            return .noSuchRoom
        }
        var timeline = RoomTimeline(history: history, capacity: capacity)
        for message in buffer { timeline.apply(message) }
        rooms[load.room] = .loaded(timeline, lastPolled: now)
        return .loaded(fillGap: timeline.hasGap && beginGapFill(load.room))
    }

    /// The load failed; its waiters get `error`. An unknown room is remembered
    /// as absent for `absentMemory`; after any other failure the next poll loads again.
    mutating func historyFailed(_ error: ProtocolError, by load: Load, now: ContinuousClock.Instant) {
        guard case .loading(load, _)? = rooms[load.room] else { return }
        rooms[load.room] = error.code == .noSuchChat ? .absent(until: now + absentMemory) : nil
    }

    // MARK: Events

    enum Arrival: Equatable {
        case kept
        /// A gap opened below the message: start a gap fill for the room.
        case fillGap(RoomID)
    }

    /// A message from the event stream (or one this gateway just posted).
    mutating func messageArrived(_ message: ChatMessage) -> Arrival {
        switch rooms[message.room] {
        case .loaded(var timeline, let polled)?:
            rooms[message.room] = nil  // the timeline is uniquely referenced while it changes
            let gap = timeline.apply(message)
            rooms[message.room] = .loaded(timeline, lastPolled: polled)
            return gap && beginGapFill(message.room) ? .fillGap(message.room) : .kept
        case .loading(let load, var buffer)?:
            rooms[message.room] = nil
            buffer.append(message)
            rooms[message.room] = .loading(load, buffer: buffer)
            return .kept
        case .absent?, .removed?, nil:
            return .kept  // nobody polls this room here, or it is gone
        }
    }

    /// The rooms were removed: answer 404 from now on.
    mutating func remove(_ removed: [RoomID], now: ContinuousClock.Instant) {
        let until = now + removedMemory
        var notHere: [RoomID] = []
        for room in removed {
            if rooms[room] != nil { rooms[room] = .removed(until: until) } else { notHere.append(room) }
        }
        if !notHere.isEmpty { recentRemovals.append((until, notHere.sorted())) }
    }

    // MARK: Gap fills

    enum GapFetch: Equatable {
        /// Read the room's messages after `after` and hand them to `gapFetched`
        /// (or report `gapFetchFailed`), then ask again.
        case fetch(after: MessageID, limit: Int)
        /// No gap left, the room is gone, or the fill gave up: the fill is over.
        case finished
    }

    mutating func nextGapFetch(_ room: RoomID) -> GapFetch {
        guard let made = gapFills[room], made < Self.fetchesPerGapFill,
            case .loaded(let timeline, _)? = rooms[room], timeline.hasGap
        else {
            gapFills[room] = nil
            return .finished
        }
        gapFills[room] = made + 1
        return .fetch(after: timeline.head, limit: capacity)
    }

    mutating func gapFetched(_ messages: [ChatMessage]) {
        // The fill is registered, so these start no other one.
        for message in messages { _ = messageArrived(message) }
    }

    /// How long to wait before the next fetch: longer after each failure.
    func gapFetchFailed(_ room: RoomID) -> Duration {
        .milliseconds(100 * (gapFills[room] ?? 1))
    }

    private mutating func beginGapFill(_ room: RoomID) -> Bool {
        guard gapFills[room] == nil else { return false }
        gapFills[room] = 0
        return true
    }

    // MARK: Eviction

    /// Drops rooms nobody polled within `idleEviction`, and expired 404 answers.
    mutating func evictIdle(now: ContinuousClock.Instant) {
        recentRemovals.removeAll { $0.until <= now }
        rooms = rooms.filter { _, entry in
            switch entry {
            case .loaded(_, let polled): now - polled < idleEviction
            case .absent(let until), .removed(let until): now < until
            case .loading: true
            }
        }
    }

    private func recentlyRemoved(_ room: RoomID) -> Bool {
        recentRemovals.contains { batch in
            var low = 0, high = batch.rooms.count
            while low < high {
                let mid = (low + high) / 2
                if batch.rooms[mid] < room { low = mid + 1 } else { high = mid }
            }
            return low < batch.rooms.count && batch.rooms[low] == room
        }
    }
}
