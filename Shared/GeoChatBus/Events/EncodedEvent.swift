import Foundation
import GeoChatDomain
import GeoChatKafka
import Synchronization

/// An event as it travels: its topic, key and the bytes of its versioned
/// envelope. What an outbox stores, so the relay sends exactly what was committed.
public struct EncodedEvent: Sendable, Hashable {
    public let topic: String
    public let key: String
    /// The `EventEnvelope` as JSON (UTF-8 text).
    public let value: String

    public init(topic: String, key: String, value: String) {
        self.topic = topic
        self.key = key
        self.value = value
    }

    /// The event in its envelope, stamped `atMs`.
    public init<Event: WireEvent>(_ event: Event, atMs: Int64 = WallClock.nowMs()) throws {
        let envelope = EventEnvelope(schema: Event.schema, atMs: atMs, event: event)
        let data = try JSONEncoder().encode(envelope)
        self.init(topic: Event.topic, key: event.partitionKey, value: String(decoding: data, as: UTF8.self))
    }

    /// The event inside, when it is of this type and schema.
    public func decode<Event: WireEvent>(_ type: Event.Type) -> Event? {
        guard topic == Event.topic else { return nil }
        return EventDecoding.decode(type, from: Array(value.utf8))
    }
}
