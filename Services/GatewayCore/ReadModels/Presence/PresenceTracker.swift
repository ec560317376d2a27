import GeoChatBus
import GeoChatDomain
import GeoChatMetrics
import Metrics
import Synchronization

/// Who showed a sign of life through this gateway, and when.
///
/// A sign of life is a memory write. What leaves a gateway is bounded by time,
/// not by requests: a session seen here is published when it was not published
/// within the refresh interval (a third of the presence timeout). The rooms
/// service reads the batches (it answers `participants`), and the session
/// service, which writes liveness to PostgreSQL from them, coarser still
/// (`SessionHousekeeping`). Gateways read none: what one gateway reads does
/// not grow with the phones of the others (docs/capacity.md, "Cluster sizes").
///
/// A batch arrives a moment after the request, so a session this gateway has
/// not seen within the timeout (back after a silence, or new here) may be
/// absent everywhere until then: its first request is answered once a
/// `MarkPresent` to the rooms service (`seen`, `runningMark`) is, after which `participants`
/// through every gateway lists it.
///
/// Bounded: sessions silent for longer than `memoryMs` are forgotten at each
/// prune, and at most `maxSessions` are held (the longest silent go first).
package final class PresenceTracker: Sendable {
    private struct Sighting {
        /// Latest sign of life seen here.
        var seenMs: Int64
        /// When this gateway last published the session (nil: never, or refused).
        var publishedMs: Int64?
    }

    private struct State {
        var sightings: [SessionID: Sighting] = [:]
        /// Seen here and due for publication.
        var due: Set<SessionID> = []
        /// The marks of possible returns on their way to the rooms service:
        /// requests of one session at the same moment wait for one.
        var marking: [SessionID: Task<Void, Never>] = [:]
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

    /// Tells the rooms service of a possible return (`MarkPresent`); false when that failed.
    private let markReturn: @Sendable (SessionID, _ seenAtMs: Int64, _ timeoutMs: Int64) async -> Bool
    private let marks = LabeledFamily(counter: MetricNames.presenceMarks, label: "outcome")

    package init(
        gateway: String, timeoutMs: @escaping @Sendable () -> Int64, maxSessions: Int = 2_000_000,
        markReturn: @escaping @Sendable (SessionID, _ seenAtMs: Int64, _ timeoutMs: Int64) async -> Bool = {
            _, _, _ in true
        }
    ) {
        self.gateway = gateway
        self.timeoutMs = timeoutMs
        self.maxSessions = maxSessions
        self.markReturn = markReturn
    }

    /// A session is republished at most this often while it stays active.
    /// A session is present while its last sign of life is this recent (an admin may change it live).
    package var presenceTimeoutMs: Int64 { timeoutMs() }
    package var refreshMs: Int64 { Self.refresh(timeoutMs: timeoutMs()) }

    private static func refresh(timeoutMs: Int64) -> Int64 { max(timeoutMs / 3, 1000) }

    /// A request carried this session id (and the session is live). When this
    /// gateway had not seen it within the presence timeout, the rooms service
    /// is told (`markReturn`), and the answer is the mark the request waits
    /// for before it is answered — also when another request of the session
    /// started it. Nil: nothing to wait for.
    @discardableResult
    package func seen(_ id: SessionID, atMs now: Int64) -> Task<Void, Never>? {
        state.withLock { state -> Task<Void, Never>? in
            let returning = note(id, atMs: now, in: &state)
            // Empty nearly always: a poll then hashes nothing more.
            if !state.marking.isEmpty, let running = state.marking[id] { return running }
            guard returning else { return nil }
            let timeout = timeoutMs()
            let task = Task {
                marks[await markReturn(id, now, timeout) ? "sent" : "failed"].increment()
                _ = self.state.withLock { $0.marking.removeValue(forKey: id) }
            }
            state.marking[id] = task
            return task
        }
    }

    /// The session's mark on its way to the rooms service, if one is.
    package func runningMark(of id: SessionID) -> Task<Void, Never>? {
        state.withLock { $0.marking.isEmpty ? nil : $0.marking[id] }
    }

    /// A session that just started: a sign of life with no memberships to mark.
    package func started(_ id: SessionID, atMs now: Int64) {
        state.withLock { _ = note(id, atMs: now, in: &$0) }
    }

    /// Records the sighting; true when the session was not seen here within the timeout.
    private func note(_ id: SessionID, atMs now: Int64, in state: inout State) -> Bool {
        let timeout = timeoutMs()
        let refresh = Self.refresh(timeoutMs: timeout)
        let previous = state.sightings[id]
        var sighting = previous ?? Sighting(seenMs: now)
        sighting.seenMs = max(sighting.seenMs, now)
        if sighting.publishedMs.map({ now - $0 >= refresh }) ?? true { state.due.insert(id) }
        state.sightings[id] = sighting
        return previous.map { now - $0.seenMs > timeout } ?? true
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
