import GeoChatBus
import GeoChatDomain
import GeoChatMetrics
import Metrics
import Synchronization

extension ServiceClients: MessageHistorySource {
    package func heads(_ rooms: [RoomID]) async throws(ProtocolError) -> [RoomHead] {
        try await send(ReadHeads(rooms: rooms))
    }
}

/// Every room's recent messages, answered from memory. A poll with nothing new
/// takes one lock and touches neither Kafka nor PostgreSQL.
///
/// The rules live in `RoomTimelines`; this carries out what they say: it runs
/// the loads and gap fills, and feeds their outcomes back.
package final class MessageReadModel: Sendable {
    private struct State {
        var timelines: RoomTimelines
        /// The loads under way; a room `loading` in `timelines` has its task here.
        var loads: [RoomTimelines.Load: Task<ProtocolError?, Never>] = [:]
    }

    private let state: Mutex<State>
    private let source: any MessageHistorySource
    /// Told of every room whose timeline may have grown (long polls and push wait on it).
    package let signals: RoomSignals
    private let eventsLost = Doorbell()
    private let lostEventsReported = Atomic<Bool>(false)

    private static let gaps = LabeledFamily(counter: MetricNames.timelineGaps, label: "cause")
    private static let fetches = Counter(label: MetricNames.timelineBackfillFetches)
    private static let fetchFailures = Counter(label: MetricNames.timelineBackfillFailures)
    private static let headChecks = LabeledFamily(counter: MetricNames.timelineHeadChecks, label: "outcome")
    /// Rooms per head read (one command each).
    package static let headBatch = 1000

    package init(
        backend: some MessageHistorySource, capacity: Int = Limits.maxMessageLimit,
        idleEviction: Duration = .seconds(600), removedMemory: Duration = .seconds(600),
        signals: RoomSignals = RoomSignals()
    ) {
        source = backend
        self.signals = signals
        state = Mutex(
            State(
                timelines: RoomTimelines(capacity: capacity, idleEviction: idleEviction, removedMemory: removedMemory)))
    }

    private enum Step {
        case answer([ChatMessage])
        case noSuchRoom
        case unavailable
        case readThrough(after: MessageID?, limit: Int)
        case wait(Task<ProtocolError?, Never>)
        /// The room is not in memory: `beforeLoading` first, then poll again.
        case admitLoad
    }

    /// `beforeReadingThrough`: asked before a page older than this gateway
    /// holds is read from the messaging service (PostgreSQL); `beforeLoading`:
    /// asked before a room not in memory is loaded from it. Either throws to
    /// refuse (the per-address history limit). A poll of a room in memory asks neither.
    package func poll(
        room: RoomID, past: MessageID, limit: Int,
        beforeReadingThrough: () throws(ProtocolError) -> Void = {},
        beforeLoading: () throws(ProtocolError) -> Void = {}
    ) async throws(ProtocolError) -> [ChatMessage] {
        var loadAdmitted = false
        for _ in 0..<4 {
            let now = ContinuousClock.now
            let step = state.withLock { state -> Step in
                if !loadAdmitted && state.timelines.wouldLoad(room, now: now) { return .admitLoad }
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
            case .readThrough(let after, let limit):
                try beforeReadingThrough()
                let history = try await source.history(room: room, after: after, limit: limit, skipRemoved: true)
                if after == nil {
                    state.withLock {
                        $0.timelines.readThrough(room, latest: limit, shown: history.messages, readHead: history.head)
                    }
                }
                return history.messages
            case .wait(let task): if let error = await task.value { throw error }
            case .admitLoad:
                try beforeLoading()
                loadAdmitted = true
            }
        }
        throw .unavailable
    }

    /// Loads a room's history and hands the outcome to the timelines; returns
    /// the error its waiters get.
    private func load(_ load: RoomTimelines.Load, limit: Int) async -> ProtocolError? {
        let history: MessageHistory
        do {
            history = try await source.history(room: load.room, after: nil, limit: limit, skipRemoved: false)
        } catch {
            let now = ContinuousClock.now
            state.withLock { state in
                state.loads[load] = nil
                state.timelines.historyFailed(error, by: load, now: now)
            }
            return error
        }
        let now = ContinuousClock.now
        let outcome = mutate { state in
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
    /// `shownFrom`: on a removal's event, where the room's shown messages start (`MessageStored`).
    package func apply(_ message: ChatMessage, shownFrom: MessageID? = nil) {
        let arrival = mutate { $0.timelines.messageArrived(message, shownFrom: shownFrom) }
        if case .fillGap(let room) = arrival { startGapFill(room) }
        signals.ring(message.room, .messages)
    }

    /// An operator's removal (`MessagesRemoved`; the gateway that took it, from its answer): one
    /// change of the room's timeline for all its tombstones, one wake-up for its readers.
    package func apply(_ removal: MessagesRemoved) {
        guard !removal.ids.isEmpty else { return }
        let gap = mutate { state in
            var gap = false
            for tombstone in removal.tombstones {
                if case .fillGap = state.timelines.messageArrived(tombstone, shownFrom: removal.shownFrom) {
                    gap = true
                }
            }
            return gap
        }
        if gap { startGapFill(removal.room) }
        signals.ring(removal.room, .messages)
    }

    /// The message ids removed in the room since `cursor` (nil: none; where things stand now), and the
    /// cursor to ask with next; nil when this gateway does not hold the room.
    package func removals(in room: RoomID, since cursor: RemovalCursor?) -> (ids: [MessageID], next: RemovalCursor)? {
        state.withLock { $0.timelines.removals(of: room, since: cursor) }
    }

    /// Whether the room's removal reached this gateway lately.
    package func knowsRemoved(_ room: RoomID) -> Bool {
        let now = ContinuousClock.now
        return state.withLock { $0.timelines.knowsRemoved(room, now: now) }
    }

    /// The rooms were removed: answer 404 from now on.
    package func remove(_ rooms: [RoomID]) {
        let now = ContinuousClock.now
        state.withLock { $0.timelines.remove(rooms, now: now) }
        for room in rooms { signals.ring(room, .messages) }
    }

    /// Fills a room's gap from the messaging service until it is closed or the
    /// room is no longer held; never gives up on its own (`RoomTimelines`).
    private func startGapFill(_ room: RoomID) {
        Task {
            while case .fetch(let after, let limit) = mutate({ $0.timelines.nextGapFetch(room) }) {
                let delay: Duration
                do throws(ProtocolError) {
                    let history = try await source.history(room: room, after: after, limit: limit, skipRemoved: false)
                    delay = mutate { state in
                        state.timelines.gapFetched(history.messages, room: room)
                        return state.timelines.gapFetchDelay(room)
                    }
                    signals.ring(room, .messages)
                } catch  where error.code == .noSuchChat {
                    remove([room])  // removed meanwhile: 404 from now on, and the fill ends
                    continue
                } catch {
                    delay = mutate { $0.timelines.gapFetchFailed(room) }
                }
                if delay > .zero { try? await Task.sleep(for: delay) }
            }
        }
    }

    /// Every `interval` until cancelled: the owner's committed heads of the rooms
    /// polled within `polledWithin`, so a message whose event never came is found
    /// without waiting for the room's next message.
    /// Every 5 s: a backstop (the outbox announces every committed message within
    /// seconds), and its cost is per gateway and polled room (docs/capacity.md).
    /// A head found above a timeline's is read again `confirmAfter` later, for
    /// those rooms alone, not at the next round: a lost event then costs about
    /// one round plus a second, not two rounds (the release fault run saw 13.5 s
    /// after a broker restart that lost acknowledged events; docs/reliability.md).
    package func checkHeads(
        every interval: Duration = .seconds(5), confirmAfter: Duration = .seconds(1),
        polledWithin: Duration = .seconds(60)
    ) async {
        while !Task.isCancelled {
            await eventsLost.wait(upTo: interval)
            if lostEventsReported.exchange(false, ordering: .acquiringAndReleasing) {
                // The owners may still be finding their partitions again: ask until one reading gets through.
                while !Task.isCancelled, await !checkHeadsOnce(polledWithin: polledWithin) {
                    try? await Task.sleep(for: confirmAfter)
                }
            } else {
                await checkHeadsOnce(polledWithin: polledWithin)
            }
            guard state.withLock({ !$0.timelines.suspectedRooms.isEmpty }) else { continue }
            try? await Task.sleep(for: confirmAfter)
            await checkHeadsOnce(onlySuspected: true)
        }
    }

    /// The broker lost the message events it held (the dev broker restarted
    /// without storage): a message acknowledged just before is then never
    /// announced. The heads are read at once, and every `confirmAfter` until a
    /// reading gets through, rather than at the next round (issue 25, item 6).
    package func eventsMayBeLost() {
        lostEventsReported.store(true, ordering: .releasing)
        eventsLost.ring()
    }

    /// Reads the owner's heads of the rooms polled within `polledWithin`, or
    /// of those suspected at the previous reading only.
    @discardableResult
    package func checkHeadsOnce(polledWithin: Duration = .seconds(60), onlySuspected: Bool = false) async -> Bool {
        let since = ContinuousClock.now - polledWithin
        let rooms = state.withLock {
            onlySuspected ? $0.timelines.suspectedRooms : $0.timelines.roomsToCheck(polledSince: since)
        }
        guard !rooms.isEmpty else { return true }
        var heads: [RoomHead] = []
        for start in stride(from: 0, to: rooms.count, by: Self.headBatch) {
            do {
                heads += try await source.heads(Array(rooms[start..<min(rooms.count, start + Self.headBatch)]))
            } catch {
                Self.headChecks["failed"].increment()
                return false  // the next check asks again
            }
        }
        Self.headChecks["done"].increment()
        let (fills, reloads, capacity) = mutate { state in
            (state.timelines.headsRead(heads), state.timelines.reloadsByHeadCheck, state.timelines.capacity)
        }
        for room in fills { startGapFill(room) }
        for reload in reloads {
            Task {
                // Its polls go on from memory meanwhile; then its subscribers read the removals they missed.
                _ = await self.load(reload, limit: capacity)
                signals.ring(reload.room, .messages)
            }
        }
        return true
    }

    /// Changes the timelines and counts what they had to heal.
    private func mutate<T: Sendable>(_ body: (inout State) -> T) -> T {
        let (result, before, after) = state.withLock { state in
            let before = state.timelines.counts
            let result = body(&state)
            return (result, before, state.timelines.counts)
        }
        guard before != after else { return result }
        if after.gapsByEvent > before.gapsByEvent {
            Self.gaps["event"].increment(by: after.gapsByEvent - before.gapsByEvent)
        }
        if after.gapsByHead > before.gapsByHead {
            Self.gaps["head"].increment(by: after.gapsByHead - before.gapsByHead)
        }
        if after.removalsByHead > before.removalsByHead {
            Self.gaps["removal"].increment(by: after.removalsByHead - before.removalsByHead)
        }
        if after.overflowed > before.overflowed {
            Self.gaps["overflow"].increment(by: after.overflowed - before.overflowed)
        }
        if after.fetches > before.fetches { Self.fetches.increment(by: after.fetches - before.fetches) }
        if after.fetchFailures > before.fetchFailures {
            Self.fetchFailures.increment(by: after.fetchFailures - before.fetchFailures)
        }
        return result
    }

    /// Drops rooms nobody polled within the idle time, and expired 404 answers.
    package func evictIdle() {
        let now = ContinuousClock.now
        state.withLock { $0.timelines.evictIdle(now: now) }
    }

    package var roomCount: Int { state.withLock { $0.timelines.roomCount } }
}

/// Where the read model gets a room's history and committed head: the messaging service.
package protocol MessageHistorySource: Sendable {
    /// `skipRemoved`: `ReadHistory.skipRemoved` (a reader's answer, not a timeline's load).
    func history(room: RoomID, after: MessageID?, limit: Int, skipRemoved: Bool) async throws(ProtocolError)
        -> MessageHistory
    func heads(_ rooms: [RoomID]) async throws(ProtocolError) -> [RoomHead]
}
