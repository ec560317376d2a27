import Foundation
import GeoChatDomain

/// Publishes events inside their versioned envelope, keyed for partitioning.
public struct EventPublisher: Sendable {
    let sender: any RecordSender

    public init(sender: any RecordSender) { self.sender = sender }

    public func publish<Event: Codable & Sendable>(
        _ event: Event, schema: String, topic: String, key: String
    ) async throws {
        let envelope = EventEnvelope(schema: schema, atMs: RequestClient.nowMs(), event: event)
        try await sender.send(topic: topic, key: key, value: Array(try JSONEncoder().encode(envelope)), partition: nil)
    }
}

/// Decodes event records of one schema; anything else is reported, not guessed at.
public enum EventDecoding {
    public static func decode<Event: Codable & Sendable>(
        _ type: Event.Type, schema: String, from record: KafkaRecord
    ) -> Event? {
        guard let envelope = try? JSONDecoder().decode(EventEnvelope<Event>.self, from: Data(record.value)),
            envelope.schema == schema
        else { return nil }
        return envelope.event
    }
}
