import Foundation
import GeoChatDomain
import GeoChatKafka
import Synchronization

public struct KafkaEventPublisher: EventPublisher {
    let sender: any RecordSender

    public init(sender: any RecordSender) { self.sender = sender }

    public func enqueue(_ record: EncodedEvent) -> RecordDelivery {
        sender.enqueue(topic: record.topic, key: record.key, value: Array(record.value.utf8), partition: nil)
    }
}
