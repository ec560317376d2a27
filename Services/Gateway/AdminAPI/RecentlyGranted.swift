import GatewayCore
import GeoChatDomain
import Hummingbird
import Logging
import Synchronization

/// Token hashes the session service granted within the last minute (at most
/// `most`): they skip the refused-token limit, never the check itself.
final class RecentlyGranted: Sendable {
    private let granted = Mutex<[String: ContinuousClock.Instant]>([:])
    static let most = 1_000
    static let window = Duration.seconds(60)

    init() {}

    func insert(_ hash: String) {
        let now = ContinuousClock.now
        granted.withLock { granted in
            if granted.count >= Self.most { granted = granted.filter { now - $0.value < Self.window } }
            if granted.count < Self.most { granted[hash] = now }
        }
    }

    func remove(_ hash: String) { _ = granted.withLock { $0.removeValue(forKey: hash) } }

    func contains(_ hash: String) -> Bool {
        let now = ContinuousClock.now
        return granted.withLock { granted in granted[hash].map { now - $0 < Self.window } ?? false }
    }
}
