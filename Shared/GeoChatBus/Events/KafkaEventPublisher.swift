import Foundation
import GeoChatDomain
import GeoChatKafka
import Synchronization

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
