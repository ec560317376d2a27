import GatewayCore
import GeoChatDomain
import GeoChatLegacyProtocol
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

    /// A switch, not reflection: `Mirror` demangles the payload's types on every
    /// call, and profiling the poll path showed it as over half of a poll's CPU time.
    static func command(_ request: LegacyRequest) -> String {
        switch request {
        case .chat(let command):
            switch command {
            case .start: "start"
            case .chats: "chats"
            case .create: "create"
            case .join: "join"
            case .leave: "leave"
            case .say: "say"
            case .messages: "messages"
            case .participants: "participants"
            case .nick: "nick"
            case .end: "end"
            }
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
