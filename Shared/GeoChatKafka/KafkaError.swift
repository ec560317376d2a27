/// Failures of the Kafka transport, typed so callers can tell "try later" from bugs.
public enum KafkaError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A property librdkafka refused.
    case configuration(String)
    /// A client handle could not be made or used.
    case client(String)
    /// The broker did not take a record (includes timeouts while it is away).
    case delivery(String)
    /// Topic administration failed.
    case admin(String)
    /// The client was shut down.
    case closed

    public var description: String {
        switch self {
        case .configuration(let s): "kafka configuration: \(s)"
        case .client(let s): "kafka client: \(s)"
        case .delivery(let s): "kafka delivery: \(s)"
        case .admin(let s): "kafka admin: \(s)"
        case .closed: "kafka client closed"
        }
    }
}
