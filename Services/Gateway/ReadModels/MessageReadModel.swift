import GeoChatDomain
import Synchronization

/// Every room's recent messages, answered from memory. A poll with nothing new
/// takes one lock and touches neither Kafka nor PostgreSQL.
///
/// A room enters on its first poll: its latest messages are loaded from the
/// messaging service while the event stream (already positioned before the
/// load) buffers what arrives meanwhile. A gap in the stream (an event lost or
/// reordered) is filled from the messaging service before anything above it
/// is shown. Rooms nobody polls are dropped after a while.
final class MessageReadModel: Sendable {
    private enum Entry {
        case loading(buffer: [ChatMessage], task: Task<ProtocolError?, Never>)
        case loaded(RoomTimeline, lastPolled: ContinuousClock.Instant)
        /// No such room (answer 404) until the instant; then ask again.
        case absent(until: ContinuousClock.Instant)
        /// Removed: answer 404. Kept for a while (`removedMemory`) so a load racing
        /// the owners' removal cannot bring the room back; afterwards the services
        /// answer 404 themselves (the cold path), and memory stays bounded.
        case removed(until: ContinuousClock.Instant)
    }

    private struct State {
        var rooms: [RoomID: Entry] = [:]
        var backfilling: Set<RoomID> = []
        /// Rooms removed lately that were not in `rooms`, one sorted list per
        /// event (8 bytes a room: an expiry run removes up to millions). A load
        /// that read the history just before the owners' removal finished
        /// checks them, so it cannot bring a removed room back.
        var recentRemovals: [(until: ContinuousClock.Instant, rooms: [RoomID])] = []

        func recentlyRemoved(_ room: RoomID) -> Bool {
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

    private let state = Mutex(State())
    private let backend: ServiceClients
    let capacity: Int
    let idleEviction: Duration
    let removedMemory: Duration

    init(
        backend: ServiceClients, capacity: Int = Limits.maxMessageLimit, idleEviction: Duration = .seconds(600),
        removedMemory: Duration = .seconds(600)
    ) {
        self.backend = backend
        self.capacity = capacity
        self.idleEviction = idleEviction
        self.removedMemory = removedMemory
    }

    private enum Lookup {
        case hit([ChatMessage])
        case needsHistory
        case notLoaded
        case loading(Task<ProtocolError?, Never>)
        case noSuchRoom
    }

    func poll(room: RoomID, past: MessageID, limit: Int) async throws(ProtocolError) -> [ChatMessage] {
        for _ in 0..<3 {
            switch lookup(room: room, past: past, limit: limit) {
            case .hit(let messages):
                return messages
            case .noSuchRoom:
                throw .noSuchChat
            case .needsHistory:
                // Older than we keep: read it through. The messaging service answers
                // from PostgreSQL, where ids are gap-free too, so the contract holds.
                return try await backend.history(room: room, after: past == 0 ? nil : past, limit: limit).messages
            case .loading(let task):
                if let error = await task.value { throw error }
            case .notLoaded:
                if let error = await startLoad(room).value { throw error }
            }
        }
        throw .unavailable
    }

    private func lookup(room: RoomID, past: MessageID, limit: Int) -> Lookup {
        let now = ContinuousClock.now
        return state.withLock { state -> Lookup in
            switch state.rooms[room] {
            case .loaded(let timeline, _)?:
                state.rooms[room] = .loaded(timeline, lastPolled: now)
                switch timeline.read(past: past, limit: limit) {
                case .messages(let slice): return .hit(Array(slice))
                case .needsHistory: return .needsHistory
                }
            case .loading(_, let task)?:
                return .loading(task)
            case .absent(let until)?:
                if now < until { return .noSuchRoom }
                state.rooms[room] = nil
                return .notLoaded
            case .removed(let until)?:
                if now < until { return .noSuchRoom }
                state.rooms[room] = nil
                return .notLoaded
            case nil:
                return .notLoaded
            }
        }
    }

    /// Starts loading a room (or joins a load already under way).
    private func startLoad(_ room: RoomID) -> Task<ProtocolError?, Never> {
        state.withLock { state -> Task<ProtocolError?, Never> in
            if case .loading(_, let task)? = state.rooms[room] { return task }
            let task = Task { await self.load(room) }
            state.rooms[room] = .loading(buffer: [], task: task)
            return task
        }
    }

    private func load(_ room: RoomID) async -> ProtocolError? {
        do {
            let history = try await backend.history(room: room, after: nil, limit: capacity)
            let gap = try state.withLock { state throws(ProtocolError) -> Bool in
                // A removal that arrived meanwhile wins over the history read before it.
                guard case .loading(let buffer, _)? = state.rooms[room] else { return false }
                if state.recentlyRemoved(room) {
                    state.rooms[room] = .removed(until: .now + removedMemory)
                    throw .noSuchChat
                }
                var timeline = RoomTimeline(history: history, capacity: capacity)
                for message in buffer { timeline.apply(message) }
                state.rooms[room] = .loaded(timeline, lastPolled: .now)
                return timeline.hasGap
            }
            if gap { startBackfill(room) }
            return nil
        } catch {
            state.withLock { state in
                guard case .loading? = state.rooms[room] else { return }
                // Unknown rooms are asked about again soon: ids are handed out upwards.
                state.rooms[room] = error.code == .noSuchChat ? .absent(until: .now + .seconds(2)) : nil
            }
            return error
        }
    }

    /// A message from the event stream.
    func apply(_ message: ChatMessage) {
        let gap = state.withLock { state -> Bool in
            switch state.rooms.removeValue(forKey: message.room) {
            case .loaded(var timeline, let polled)?:
                let gap = timeline.apply(message)
                state.rooms[message.room] = .loaded(timeline, lastPolled: polled)
                return gap && !state.backfilling.contains(message.room)
            case .loading(var buffer, let task)?:
                buffer.append(message)
                state.rooms[message.room] = .loading(buffer: buffer, task: task)
                return false
            case let other?:
                state.rooms[message.room] = other
                return false
            case nil:
                return false  // nobody polls this room here
            }
        }
        if gap { startBackfill(message.room) }
    }

    /// The rooms were removed: answer 404 from now on.
    func remove(_ rooms: [RoomID]) {
        let until = ContinuousClock.now + removedMemory
        state.withLock { state in
            var notHere: [RoomID] = []
            for room in rooms {
                if state.rooms[room] != nil { state.rooms[room] = .removed(until: until) } else { notHere.append(room) }
            }
            if !notHere.isEmpty { state.recentRemovals.append((until, notHere.sorted())) }
        }
    }

    private func startBackfill(_ room: RoomID) {
        let start = state.withLock { $0.backfilling.insert(room).inserted }
        guard start else { return }
        Task {
            defer { _ = state.withLock { $0.backfilling.remove(room) } }
            for attempt in 0..<10 {
                guard let head = state.withLock({ state -> MessageID? in
                    guard case .loaded(let timeline, _)? = state.rooms[room], timeline.hasGap else { return nil }
                    return timeline.head
                }) else { return }
                do {
                    let history = try await backend.history(room: room, after: head, limit: capacity)
                    for message in history.messages { apply(message) }
                } catch {
                    try? await Task.sleep(for: .milliseconds(100 * (attempt + 1)))
                }
            }
        }
    }

    /// Drops rooms nobody polled within `idleEviction`, and expired 404 answers.
    func evictIdle() {
        let now = ContinuousClock.now
        state.withLock { state in
            state.recentRemovals.removeAll { $0.until <= now }
            state.rooms = state.rooms.filter { _, entry in
                switch entry {
                case .loaded(_, let polled): return now - polled < idleEviction
                case .absent(let until), .removed(let until): return now < until
                case .loading: return true
                }
            }
        }
    }

    var roomCount: Int { state.withLock { $0.rooms.count } }
}
