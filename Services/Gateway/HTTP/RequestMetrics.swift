import GatewayCore
import GeoChatDomain
import GeoChatMetrics
import Metrics

/// Counts and times every chat request by its name (`ChatRequests.Call.name`:
/// a legacy command's `messages`, `say`, …, `lobby_post`, `lobby_messages`,
/// `invalid` when it did not parse; a JSON operation's `api_say`, …), and
/// counts error answers by their protocol code.
enum RequestMetrics {
    static let requests = LabeledFamily(counter: MetricNames.httpRequests, label: "command")
    static let errors = LabeledFamily(counter: MetricNames.httpRequestErrors, label: "code")
    static let duration = LabeledFamily(timer: MetricNames.httpRequestDuration, label: "command")

    static let unparsed = "invalid"

    static func record(_ command: String, since started: ContinuousClock.Instant, error: ProtocolError? = nil) {
        requests[command].increment()
        duration[command].record(since: started)
        if let error { errors[error.code.rawValue].increment() }
    }
}
