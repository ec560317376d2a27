import Foundation
import GeoChatDomain
import GeoChatKafka
import Logging
import Synchronization

/// What a handler knows of a request besides its command.
public struct CommandContext: Sendable {
    public var idempotencyKey: String
    public var correlationID: String
    public var deadline: Deadline
    /// The requesting instance, named by its reply topic (audit rows say which gateway).
    public var requester: String
    /// Records the reply must wait for (`replyAfter`).
    public let replyGate: ReplyGate

    public init(
        idempotencyKey: String, correlationID: String = "", deadline: Deadline, requester: String = "",
        replyGate: ReplyGate = ReplyGate()
    ) {
        self.idempotencyKey = idempotencyKey
        self.correlationID = correlationID
        self.deadline = deadline
        self.requester = requester
        self.replyGate = replyGate
    }

    /// The reply goes only once the broker has this record (or refused it:
    /// `failure` is logged then, and the reply goes all the same). The handler
    /// need not wait for it, so the next command of its key starts at once.
    public func replyAfter(_ delivery: RecordDelivery, failure: String) {
        replyGate.add(delivery, failure: failure)
    }
}
