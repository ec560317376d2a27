import GeoChatMetrics
import Metrics
import Synchronization

/// At most `limit` failed logins per minute through this gateway, whoever
/// tries: guessing across many names stays slow. (The session service also
/// limits failures per name, cluster-wide, and checks one password at a time
/// per instance.) An attempt counts as a failure from the moment it is sent
/// (`admit`), and stops counting only when it succeeded (`succeeded`): a burst
/// of a thousand logins at once sends `limit`, not a thousand, and one that
/// times out stays a failure. The price: someone failing on purpose delays
/// genuine logins by up to a minute.
final class LoginThrottle: Sendable {
    private let attempts = Mutex<[ContinuousClock.Instant]>([])
    let limit: Int
    let window: Duration
    /// Refusals are counted in metrics and audited once a minute at most.
    private let lastAudit = Mutex<(at: ContinuousClock.Instant?, suppressed: Int)>((nil, 0))

    init(limit: Int = 30, window: Duration = .seconds(60)) {
        self.limit = limit
        self.window = window
    }

    /// Counts the attempt as a failure now; false (nothing counted) when the limit is reached.
    func admit() -> Ticket? {
        let now = ContinuousClock.now
        return attempts.withLock { attempts in
            attempts.removeAll { now - $0 > window }
            guard attempts.count < limit else { return nil }
            attempts.append(now)
            return Ticket(at: now)
        }
    }

    /// The login was granted: it was no failure.
    func succeeded(_ ticket: Ticket) {
        attempts.withLock { attempts in
            if let index = attempts.firstIndex(of: ticket.at) { attempts.remove(at: index) }
        }
    }

    /// Whether a refusal should be audited now, and how many were not since the last row.
    func refusalToAudit() -> Int? {
        let now = ContinuousClock.now
        return lastAudit.withLock { last in
            if let at = last.at, now - at < window {
                last.suppressed += 1
                return nil
            }
            defer { last = (now, 0) }
            return last.suppressed
        }
    }

    struct Ticket: Sendable {
        let at: ContinuousClock.Instant
    }
}

enum AdminMetrics {
    /// Label `by`: `gateway` here (the session service counts `name` and `busy`).
    static let throttledLogins = LabeledFamily(counter: MetricNames.adminLoginsThrottled, label: "by")
    /// Label `why`: `malformed` (not a token of this server), `refused` (unknown,
    /// expired or revoked), `throttled` (not asked: too many refusals this minute).
    static let tokenRefusals = LabeledFamily(counter: MetricNames.adminTokenRefusals, label: "why")
}
