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
}
