import GeoChatDomain
import GeoChatMetrics
import Metrics

/// Counts and times every legacy request by command (`messages`, `say`, …,
/// `lobby_post`, `lobby_messages`; `invalid` when it did not parse), and counts
/// error answers by their protocol code.
enum RequestMetrics {
    static let requests = LabeledFamily(counter: MetricNames.httpRequests, label: "command")
    static let errors = LabeledFamily(counter: MetricNames.httpRequestErrors, label: "code")
    static let duration = LabeledFamily(timer: MetricNames.httpRequestDuration, label: "command")

    static let unparsed = "invalid"

    static func command(_ request: LegacyRequest) -> String {
        switch request {
        case .chat(let command): MetricLabels.caseName(of: command)
        case .lobbyPost: "lobby_post"
        case .lobbyMessages: "lobby_messages"
        }
    }

    static func record(_ command: String, since started: ContinuousClock.Instant, error: ProtocolError? = nil) {
        requests[command].increment()
        duration[command].record(since: started)
        if let error { errors[error.code.rawValue].increment() }
    }
}
