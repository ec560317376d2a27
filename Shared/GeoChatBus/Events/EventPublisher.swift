import Foundation
import GeoChatDomain
import GeoChatKafka
import Synchronization

/// Publishes events on their topic, in their versioned envelope, under their key.
public protocol EventPublisher: Sendable {
    /// Hands the record to the producer now, without waiting: records enqueued
    /// one after another keep their order. `wait()` on the answer ends once it is durable.
    func enqueue(_ record: EncodedEvent) -> RecordDelivery
}

extension EventPublisher {
    /// Returns once the event is durable on the broker.
    public func publish<Event: WireEvent>(_ event: Event) async throws {
        try await enqueue(try EncodedEvent(event)).wait()
    }

    /// `enqueue` of the event in its envelope, stamped now.
    public func enqueue<Event: WireEvent>(_ event: Event) -> RecordDelivery {
        do { return enqueue(try EncodedEvent(event)) } catch { return .completed(error) }
    }
}

public struct KafkaEventPublisher: EventPublisher {
    let sender: any RecordSender

    public init(sender: any RecordSender) { self.sender = sender }

    /// An event published while a command is handled carries its trace context
    /// (the outbox relay's, published later from no request, carries none).
    public func enqueue(_ record: EncodedEvent) -> RecordDelivery {
        sender.enqueue(
            topic: record.topic, key: record.key, value: Array(record.value.utf8), partition: nil,
            headers: TraceHeaders.current())
    }
}
