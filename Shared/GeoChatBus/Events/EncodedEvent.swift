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

    /// The event in its envelope, stamped `atMs`, naming the request it `answers` if any.
    public init<Event: WireEvent>(_ event: Event, atMs: Int64 = WallClock.nowMs(), answers: String? = nil) throws {
        let envelope = EventEnvelope(schema: Event.schema, atMs: atMs, event: event, answers: answers)
        let data = try JSONEncoder().encode(envelope)
        self.init(topic: Event.topic, key: event.partitionKey, value: String(decoding: data, as: UTF8.self))
    }

    /// The event inside, when it is of this type and schema.
    public func decode<Event: WireEvent>(_ type: Event.Type) -> Event? {
        guard topic == Event.topic else { return nil }
        return EventDecoding.decode(type, from: Array(value.utf8))
    }

    /// The same record naming the request it answers (`EventEnvelope.answers`),
    /// for the handler's own announcement of an event an outbox holds as it
    /// was staged; nil if the value is no JSON object.
    ///
    /// A staged envelope (what `init(_:atMs:answers:)` wrote) names no request,
    /// so the name goes in as the object's first member, without parsing and
    /// writing the envelope again (that took 8 % of the rooms service's CPU in a
    /// run of creates); only a value that does not look like one is parsed.
    public func answering(_ correlationID: String) -> EncodedEvent? {
        let member = "\"answers\":" + Self.quoted(correlationID)
        if value.utf8.first == UInt8(ascii: "{"), !value.contains("\"answers\"") {
            let rest = value.utf8.dropFirst()
            let separator = rest.first == UInt8(ascii: "}") ? "" : ","
            return EncodedEvent(topic: topic, key: key, value: "{" + member + separator + String(Substring(rest)))
        }
        guard var envelope = (try? JSONSerialization.jsonObject(with: Data(value.utf8))) as? [String: Any] else {
            return nil
        }
        envelope["answers"] = correlationID
        guard let data = try? JSONSerialization.data(withJSONObject: envelope) else { return nil }
        return EncodedEvent(topic: topic, key: key, value: String(decoding: data, as: UTF8.self))
    }

    /// `text` as a JSON string: quoted, with quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

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
