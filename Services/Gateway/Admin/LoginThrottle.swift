import Synchronization

/// At most `limit` failed logins per minute through this gateway, whoever
/// tries: guessing across many names stays slow. (The session service also
/// limits failures per name, cluster-wide.) The price: someone failing on
/// purpose delays genuine logins by up to a minute.
final class LoginThrottle: Sendable {
    private let failures = Mutex<[ContinuousClock.Instant]>([])
    let limit: Int
    let window: Duration

    init(limit: Int = 30, window: Duration = .seconds(60)) {
        self.limit = limit
        self.window = window
    }

    var allowsAttempt: Bool {
        let now = ContinuousClock.now
        return failures.withLock { failures in
            failures.removeAll { now - $0 > window }
            return failures.count < limit
        }
    }

    func recordFailure() {
        let now = ContinuousClock.now
        failures.withLock { failures in
            failures.removeAll { now - $0 > window }
            failures.append(now)
        }
    }
}
