import GeoChatKafka

/// What an outbox holds: an event to publish, named by a reference the outbox
/// can delete it by.
public protocol OutboxEntry: Sendable {
    associatedtype Ref: Hashable & Sendable
    var ref: Ref { get }
    /// Entries of one lane leave in order (a Kafka key: one room's, one session's events).
    var lane: String { get }
    func enqueue(on events: any EventPublisher) -> RecordDelivery
}
