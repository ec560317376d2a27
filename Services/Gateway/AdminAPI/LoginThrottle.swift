import GatewayCore
import GeoChatMetrics
import Metrics
import Synchronization

/// At most `limit` failed attempts per minute from one client address through
/// this gateway: guessing from one place stays slow, and someone failing on
/// purpose holds back only their own address, never an admin elsewhere. (The
/// session service also limits failures per name and address, cluster-wide,
/// and checks one password at a time per instance.) An attempt counts as a
/// failure from the moment it is sent (`admit`), and stops counting only when
/// it succeeded (`succeeded`): a burst of a thousand logins at once sends
/// `limit`, not a thousand, and one that times out stays a failure.
final class LoginThrottle: Sendable {
    private let attempts = Mutex<[String: [ContinuousClock.Instant]]>([:])
    let limit: Int
    let window: Duration
    /// Addresses remembered at most; beyond it the oldest are forgotten (their
    /// failures are at most a minute old, and the session service still counts them).
    static let maxAddresses = 10_000
    /// Refusals are counted in metrics and audited once a minute at most.
    private let lastAudit = Mutex<(at: ContinuousClock.Instant?, suppressed: Int)>((nil, 0))

    init(limit: Int = 30, window: Duration = .seconds(60)) {
        self.limit = limit
        self.window = window
    }

    /// Counts the attempt from `address` as a failure now; nil (nothing counted) when its limit is reached.
    func admit(address: String) -> Ticket? {
        let now = ContinuousClock.now
        return attempts.withLock { attempts in
            var mine = attempts[address, default: []]
            mine.removeAll { now - $0 > window }
            guard mine.count < limit else {
                attempts[address] = mine
                return nil
            }
            mine.append(now)
            if attempts[address] == nil && attempts.count >= Self.maxAddresses {
                attempts = attempts.filter { _, times in times.contains { now - $0 <= window } }
                if attempts.count >= Self.maxAddresses { attempts.removeAll() }
            }
            attempts[address] = mine
            return Ticket(address: address, at: now)
        }
    }

    /// The attempt was granted: it was no failure.
    func succeeded(_ ticket: Ticket) {
        attempts.withLock { attempts in
            guard var mine = attempts[ticket.address], let index = mine.firstIndex(of: ticket.at) else { return }
            mine.remove(at: index)
            attempts[ticket.address] = mine.isEmpty ? nil : mine
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
        let address: String
        let at: ContinuousClock.Instant
    }
}
