import GeoChatDomain

/// Why a request did not get its answer.
public enum RequestError: Error, Sendable, Equatable {
    /// No reply before the deadline: the owner may or may not have done it.
    case timedOut
    /// The command could not be handed to Kafka: nothing was done.
    case notSent(String)
    /// The owner answered with a protocol error.
    case refused(ProtocolError)
    /// The owner answered something this requester did not expect.
    case unexpectedReply(String)

    /// What a client is told. A command that timed out or was not confirmed sent
    /// may still have reached its owner and been carried out: "outcome unknown",
    /// never "nothing was done".
    public var protocolError: ProtocolError {
        switch self {
        case .refused(let refusal): refusal
        case .unexpectedReply: .unavailable
        case .timedOut, .notSent: .outcomeUnknown
        }
    }
}
