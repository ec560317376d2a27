import GatewayCore
import GeoChatMetrics
import Metrics
import Synchronization

enum AdminMetrics {
    /// Label `by`: `gateway` here (the session service counts `name` and `busy`).
    static let throttledLogins = LabeledFamily(counter: MetricNames.adminLoginsThrottled, label: "by")
    /// Label `why`: `malformed` (not a token of this server), `refused` (unknown,
    /// expired or revoked), `throttled` (not asked: too many refusals this minute).
    static let tokenRefusals = LabeledFamily(counter: MetricNames.adminTokenRefusals, label: "why")
}
