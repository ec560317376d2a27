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

    public func enqueue(_ record: EncodedEvent) -> RecordDelivery {
        sender.enqueue(topic: record.topic, key: record.key, value: Array(record.value.utf8), partition: nil)
    }
}

/// Events kept in memory, for unit tests: what was published, in order, and a
/// switch to make publishing fail as a broker that refuses would.
public final class RecordedEvents: EventPublisher {
    public struct Refused: Error {}

    private let state = Mutex<(records: [EncodedEvent], refusing: Bool)>(([], false))

    public init() {}

    /// Recorded (or refused) at once, in call order.
    public func enqueue(_ record: EncodedEvent) -> RecordDelivery {
        let refused = state.withLock { state -> Bool in
            if state.refusing { return true }
            state.records.append(record)
            return false
        }
        return .completed(refused ? Refused() : nil)
    }

    /// Makes every publish fail (true) or succeed again (false).
    public func refuse(_ refusing: Bool) { state.withLock { $0.refusing = refusing } }

    /// The events of one type published so far, oldest first.
    public func published<Event: WireEvent>(_ type: Event.Type) -> [Event] {
        state.withLock { $0.records.compactMap { $0.decode(type) } }
    }

    public var count: Int { state.withLock { $0.records.count } }
}

/// Decodes event records of one type; a record of another schema is reported, not guessed at.
public enum EventDecoding {
    public static func decode<Event: WireEvent>(_ type: Event.Type, from record: KafkaRecord) -> Event? {
        decode(type, from: record.value)
    }

    public static func decode<Event: WireEvent>(_ type: Event.Type, from bytes: [UInt8]) -> Event? {
        guard let envelope = try? JSONDecoder().decode(EventEnvelope<Event>.self, from: Data(bytes)),
            envelope.schema == Event.schema
        else { return nil }
        return envelope.event
    }
}
