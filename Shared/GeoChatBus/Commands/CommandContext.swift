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
    /// The requester reads the event topics (`RequestEnvelope.readsEvents`).
    public var requesterReadsEvents: Bool
    /// The record that carries the reply instead of a reply record (`answeredBy`).
    public let replyCarrier: ReplyCarrier

    public init(
        idempotencyKey: String, correlationID: String = "", deadline: Deadline, requester: String = "",
        requesterReadsEvents: Bool = false, replyCarrier: ReplyCarrier = ReplyCarrier()
    ) {
        self.idempotencyKey = idempotencyKey
        self.correlationID = correlationID
        self.deadline = deadline
        self.requester = requester
        self.requesterReadsEvents = requesterReadsEvents
        self.replyCarrier = replyCarrier
    }

    /// What an event this command announces names as the request it answers
    /// (`EventEnvelope.answers`): the correlation id, if the requester reads
    /// the event topics; nil if only a reply record reaches it.
    public var eventAnswers: String? { requesterReadsEvents ? correlationID : nil }

    /// The reply travels in this record, which the requester reads anyway
    /// (a say's message event names the request: `eventAnswers`), so no reply
    /// record is sent for a successful answer — unless the broker did not
    /// take this one; then the reply record goes after all.
    public func answeredBy(_ delivery: RecordDelivery) {
        replyCarrier.carry(by: delivery)
    }
}
