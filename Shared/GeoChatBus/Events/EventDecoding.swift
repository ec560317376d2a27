import Foundation
import GeoChatDomain
import GeoChatKafka
import Synchronization

/// Decodes event records of one type; a record of another schema is reported, not guessed at.
public enum EventDecoding {
    public static func decode<Event: WireEvent>(_ type: Event.Type, from record: KafkaRecord) -> Event? {
        decode(type, from: record.value)
    }

    public static func decode<Event: WireEvent>(_ type: Event.Type, from bytes: [UInt8]) -> Event? {
        envelope(type, from: bytes)?.event
    }

    /// The whole envelope: the event, and the request it answers (`EventEnvelope.answers`).
    public static func envelope<Event: WireEvent>(_ type: Event.Type, from bytes: [UInt8]) -> EventEnvelope<Event>? {
        guard let envelope = try? JSONDecoder().decode(EventEnvelope<Event>.self, from: Data(bytes)),
            envelope.schema == Event.schema
        else { return nil }
        return envelope
    }
}
