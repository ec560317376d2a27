import Foundation
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

extension WireCommand {
    /// The reply in a `ReplyEnvelope` record, or the error its owner refused the command with.
    static func reply(from record: [UInt8]) throws(RequestError) -> Reply {
        let envelope: ReplyEnvelope<Reply>
        do { envelope = try JSONDecoder().decode(ReplyEnvelope<Reply>.self, from: Data(record)) } catch {
            throw .unexpectedReply("\(name): \(error)")
        }
        switch envelope.result {
        case .success(let reply): return reply
        case .failure(let refusal): throw .refused(refusal)
        case nil: throw .unexpectedReply("\(name): a reply with neither a body nor an error")
        }
    }
}
