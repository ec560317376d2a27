import GeoChatBus
import GeoChatDomain
import GeoChatMetrics
import Metrics
import Synchronization

/// Who showed a sign of life, and when, across all gateways.
///
/// A sign of life is a memory write. What leaves a gateway is bounded by time,
/// not by requests: a session seen here is published when it was not published
/// within the refresh interval (a third of the presence timeout), so another
/// gateway's view of it is never older than that, and it stays present there
/// for as long as it polls here. Each gateway reads every gateway's batches
/// (its own included); the session service writes liveness to PostgreSQL from
/// them, coarser still (`SessionHousekeeping`).
///
/// Bounded: sessions silent for longer than `memoryMs` are forgotten at each
/// prune, and at most `maxSessions` are held (the longest silent go first).
package final class PresenceTracker: Sendable {
    private struct Sighting {
        /// Latest sign of life known here, from any gateway.
        var seenMs: Int64
        /// When this gateway last published the session (nil: never, or refused).
        var publishedMs: Int64?
    }

    private struct State {
        var sightings: [SessionID: Sighting] = [:]
        /// Seen here and due for publication.
        var due: Set<SessionID> = []
    }

    private let state = Mutex(State())
    package let gateway: String
    /// The presence timeout now (a live setting).
    private let timeoutMs: @Sendable () -> Int64
    package let maxSessions: Int
    /// A batch stays far below the broker's message size (~30 bytes a session).
    package static let maxBatch = 10_000

    private let published = Counter(label: MetricNames.presenceSightingsPublished)
    private let failures = Counter(label: MetricNames.presencePublishFailures)

    package init(gateway: String, timeoutMs: @escaping @Sendable () -> Int64, maxSessions: Int = 2_000_000) {
        self.gateway = gateway
        self.timeoutMs = timeoutMs
        self.maxSessions = maxSessions
    }

    /// A session is republished at most this often while it stays active.
    /// A session is present while its last sign of life is this recent (an admin may change it live).
    package var presenceTimeoutMs: Int64 { timeoutMs() }
    package var refreshMs: Int64 { max(timeoutMs() / 3, 1000) }

    /// A request carried this session id (and the session is live).
    package func seen(_ id: SessionID, atMs now: Int64) {
        let refresh = refreshMs
        state.withLock { state in
            var sighting = state.sightings[id] ?? Sighting(seenMs: now)
            sighting.seenMs = max(sighting.seenMs, now)
            if sighting.publishedMs.map({ now - $0 >= refresh }) ?? true { state.due.insert(id) }
            state.sightings[id] = sighting
        }
    }

    /// Another gateway's (or our own) published sightings.
    package func record(_ batch: PresenceBatch) {
        state.withLock { state in
            for id in batch.sessions {
                if let known = state.sightings[id] {
                    if batch.seenAtMs > known.seenMs { state.sightings[id]!.seenMs = batch.seenAtMs }
                } else {
                    state.sightings[id] = Sighting(seenMs: batch.seenAtMs)
                }
            }
        }
    }

    package func lastSeenMs(_ id: SessionID) -> Int64? { state.withLock { $0.sightings[id]?.seenMs } }

    package func isPresent(_ id: SessionID, nowMs: Int64, timeoutMs: Int64) -> Bool {
        (lastSeenMs(id) ?? 0) >= nowMs - timeoutMs
    }

    package var count: Int { state.withLock { $0.sightings.count } }

    /// The sessions due for publication, at most `maxBatch`; marked published as of `nowMs`.
    package func takeDue(nowMs: Int64) -> [SessionID] {
        state.withLock { state in
            var batch: [SessionID] = []
            batch.reserveCapacity(min(state.due.count, Self.maxBatch))
            while batch.count < Self.maxBatch, let id = state.due.popFirst() {
                guard state.sightings[id] != nil else { continue }
                state.sightings[id]!.publishedMs = nowMs
                batch.append(id)
            }
            return batch
        }
    }

    /// A batch the broker refused: due again, so the next round retries it.
    package func publishFailed(_ sessions: [SessionID]) {
        state.withLock { state in
            for id in sessions where state.sightings[id] != nil {
                state.sightings[id]!.publishedMs = nil
                state.due.insert(id)
            }
        }
    }

    /// Forgets sessions silent since before `cutoff`, then the longest silent beyond `maxSessions`.
    package func prune(olderThanMs cutoff: Int64) {
        state.withLock { state in
            state.sightings = state.sightings.filter { $0.value.seenMs >= cutoff }
            if state.sightings.count > maxSessions {
                let excess = state.sightings.count - maxSessions
                for (id, _) in state.sightings.sorted(by: { $0.value.seenMs < $1.value.seenMs }).prefix(excess) {
                    state.sightings[id] = nil
                }
            }
            state.due = state.due.filter { state.sightings[$0] != nil }
        }
    }

    /// Publishes this gateway's due sightings every `interval`, in batches of at most `maxBatch`.
    package func publishLoop(events: any EventPublisher, every interval: Duration) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            while !Task.isCancelled {
                let now = WallClock.nowMs()
                let sessions = takeDue(nowMs: now)
                guard !sessions.isEmpty else { break }
                do {
                    try await events.publish(PresenceBatch(gateway: gateway, seenAtMs: now, sessions: sessions))
                    published.increment(by: sessions.count)
                } catch {
                    failures.increment()
                    publishFailed(sessions)
                    break
                }
            }
        }
    }
}
