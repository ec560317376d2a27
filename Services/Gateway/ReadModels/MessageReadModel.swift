import GeoChatDomain
import Synchronization

/// Where the read model gets a room's history: the messaging service.
protocol MessageHistorySource: Sendable {
    func history(room: RoomID, after: MessageID?, limit: Int) async throws(ProtocolError) -> MessageHistory
}

extension ServiceClients: MessageHistorySource {}

/// Every room's recent messages, answered from memory. A poll with nothing new
/// takes one lock and touches neither Kafka nor PostgreSQL.
///
/// The rules live in `RoomTimelines`; this carries out what they say: it runs
/// the loads and gap fills, and feeds their outcomes back.
final class MessageReadModel: Sendable {
    private struct State {
        var timelines: RoomTimelines
        /// The loads under way; a room `loading` in `timelines` has its task here.
        var loads: [RoomTimelines.Load: Task<ProtocolError?, Never>] = [:]
    }

    private let state: Mutex<State>
    private let source: any MessageHistorySource

    init(
        backend: some MessageHistorySource, capacity: Int = Limits.maxMessageLimit,
        idleEviction: Duration = .seconds(600), removedMemory: Duration = .seconds(600)
    ) {
        source = backend
        state = Mutex(
            State(timelines: RoomTimelines(capacity: capacity, idleEviction: idleEviction, removedMemory: removedMemory)))
    }

    private enum Step {
        case answer([ChatMessage])
        case noSuchRoom
        case unavailable
        case readThrough(after: MessageID?, limit: Int)
        case wait(Task<ProtocolError?, Never>)
    }

    func poll(room: RoomID, past: MessageID, limit: Int) async throws(ProtocolError) -> [ChatMessage] {
        for _ in 0..<3 {
            let now = ContinuousClock.now
            let step = state.withLock { state -> Step in
                switch state.timelines.poll(room: room, past: past, limit: limit, now: now) {
                case .answer(let messages): return .answer(messages)
                case .noSuchRoom: return .noSuchRoom
                case .readThrough(let after, let limit): return .readThrough(after: after, limit: limit)
                case .waitForLoad(let load):
                    guard let task = state.loads[load] else { return .unavailable }  // cannot happen: see `loads`
                    return .wait(task)
                case .startLoad(let load, let limit):
                    let task = Task { await self.load(load, limit: limit) }
                    state.loads[load] = task
                    return .wait(task)
                }
            }
            switch step {
            case .answer(let messages): return messages
            case .noSuchRoom: throw .noSuchChat
            case .unavailable: throw .unavailable
            case .readThrough(let after, let limit): return try await source.history(room: room, after: after, limit: limit).messages
            case .wait(let task): if let error = await task.value { throw error }
            }
        }
        throw .unavailable
    }

    /// Loads a room's history and hands the outcome to the timelines; returns
    /// the error its waiters get.
    private func load(_ load: RoomTimelines.Load, limit: Int) async -> ProtocolError? {
        let history: MessageHistory
        do {
            history = try await source.history(room: load.room, after: nil, limit: limit)
        } catch {
            let now = ContinuousClock.now
            state.withLock { state in
                state.loads[load] = nil
                state.timelines.historyFailed(error, by: load, now: now)
            }
            return error
        }
        let now = ContinuousClock.now
        let outcome = state.withLock { state in
            state.loads[load] = nil
            return state.timelines.historyLoaded(history, by: load, now: now)
        }
        switch outcome {
        case .loaded(let fillGap):
            if fillGap { startGapFill(load.room) }
            return nil
        case .noSuchRoom:
            return .noSuchChat
        case .stale:
            return nil
        }
    }

    /// A message from the event stream.
    func apply(_ message: ChatMessage) {
        let arrival = state.withLock { $0.timelines.messageArrived(message) }
        if case .fillGap(let room) = arrival { startGapFill(room) }
    }

    /// The rooms were removed: answer 404 from now on.
    func remove(_ rooms: [RoomID]) {
        let now = ContinuousClock.now
        state.withLock { $0.timelines.remove(rooms, now: now) }
    }

    private func startGapFill(_ room: RoomID) {
        Task {
            while case .fetch(let after, let limit) = state.withLock({ $0.timelines.nextGapFetch(room) }) {
                do {
                    let history = try await source.history(room: room, after: after, limit: limit)
                    state.withLock { $0.timelines.gapFetched(history.messages) }
                } catch {
                    try? await Task.sleep(for: state.withLock { $0.timelines.gapFetchFailed(room) })
                }
            }
        }
    }

    /// Drops rooms nobody polled within the idle time, and expired 404 answers.
    func evictIdle() {
        let now = ContinuousClock.now
        state.withLock { $0.timelines.evictIdle(now: now) }
    }

    var roomCount: Int { state.withLock { $0.timelines.roomCount } }
}
