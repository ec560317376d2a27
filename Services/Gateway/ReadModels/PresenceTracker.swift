import GeoChatBus
import GeoChatDomain
import Synchronization

/// Who showed a sign of life, and when, across all gateways: each gateway
/// records the sessions it sees, publishes them in batches, and reads every
/// gateway's batches (its own included).
final class PresenceTracker: Sendable {
    private struct State {
        var lastSeenMs: [SessionID: Int64] = [:]
        var unsent: Set<SessionID> = []
    }

    private let state = Mutex(State())
    let gateway: String

    init(gateway: String) { self.gateway = gateway }

    /// A request carried this session id (and the session is live).
    func seen(_ id: SessionID, atMs now: Int64) {
        state.withLock { state in
            state.lastSeenMs[id] = max(state.lastSeenMs[id] ?? 0, now)
            state.unsent.insert(id)
        }
    }

    func record(_ batch: PresenceBatch) {
        state.withLock { state in
            for id in batch.sessions { state.lastSeenMs[id] = max(state.lastSeenMs[id] ?? 0, batch.seenAtMs) }
        }
    }

    func isPresent(_ id: SessionID, nowMs: Int64, timeoutMs: Int64) -> Bool {
        state.withLock { ($0.lastSeenMs[id] ?? 0) >= nowMs - timeoutMs }
    }

    /// The sessions seen since the last call.
    func takeUnsent() -> [SessionID] {
        state.withLock { state in
            defer { state.unsent.removeAll(keepingCapacity: true) }
            return Array(state.unsent)
        }
    }

    /// Forgets sessions silent for longer than any timeout that matters.
    func prune(olderThanMs cutoff: Int64) {
        state.withLock { $0.lastSeenMs = $0.lastSeenMs.filter { $0.value >= cutoff } }
    }

    /// Publishes this gateway's sightings every `interval`.
    func publishLoop(events: any EventPublisher, every interval: Duration) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let sessions = takeUnsent()
            guard !sessions.isEmpty else { continue }
            let batch = PresenceBatch(gateway: gateway, seenAtMs: WallClock.nowMs(), sessions: sessions)
            // Best effort: a lost batch is made good by the next sign of life.
            try? await events.publish(batch)
        }
    }
}
