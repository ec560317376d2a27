import Foundation
import GeoChatDomain
import GeoChatKafka
import Synchronization

/// Publishes events on their topic, in their versioned envelope, under their key.
public protocol EventPublisher: Sendable {
    /// Returns once the event is durable on the broker.
    func publish<Event: WireEvent>(_ event: Event) async throws
    /// Hands the event to the producer now, without waiting: events enqueued one
    /// after another keep their order. `wait()` on the answer ends once it is durable.
    func enqueue<Event: WireEvent>(_ event: Event) -> RecordDelivery
}

public struct KafkaEventPublisher: EventPublisher {
    let sender: any RecordSender

    public init(sender: any RecordSender) { self.sender = sender }

    public func publish<Event: WireEvent>(_ event: Event) async throws {
        try await enqueue(event).wait()
    }

    public func enqueue<Event: WireEvent>(_ event: Event) -> RecordDelivery {
        let envelope = EventEnvelope(schema: Event.schema, atMs: WallClock.nowMs(), event: event)
        let value: [UInt8]
        do { value = Array(try JSONEncoder().encode(envelope)) } catch { return .completed(error) }
        return sender.enqueue(topic: Event.topic, key: event.partitionKey, value: value, partition: nil)
    }
}

/// Events kept in memory, for unit tests: what was published, in order, and a
/// switch to make publishing fail as a broker that refuses would.
public final class RecordedEvents: EventPublisher {
    public struct Refused: Error {}

    private let state = Mutex<(events: [any WireEvent], refusing: Bool)>(([], false))

    public init() {}

    public func publish<Event: WireEvent>(_ event: Event) async throws {
        try await enqueue(event).wait()
    }

    /// Recorded (or refused) at once, in call order.
    public func enqueue<Event: WireEvent>(_ event: Event) -> RecordDelivery {
        let refused = state.withLock { state -> Bool in
            if state.refusing { return true }
            state.events.append(event)
            return false
        }
        return .completed(refused ? Refused() : nil)
    }

    /// Makes every publish fail (true) or succeed again (false).
    public func refuse(_ refusing: Bool) { state.withLock { $0.refusing = refusing } }

    /// The events of one type published so far, oldest first.
    public func published<Event: WireEvent>(_ type: Event.Type) -> [Event] {
        state.withLock { $0.events.compactMap { $0 as? Event } }
    }

    public var count: Int { state.withLock { $0.events.count } }
}

/// Decodes event records of one type; a record of another schema is reported, not guessed at.
public enum EventDecoding {
    public static func decode<Event: WireEvent>(_ type: Event.Type, from record: KafkaRecord) -> Event? {
        guard let envelope = try? JSONDecoder().decode(EventEnvelope<Event>.self, from: Data(record.value)),
            envelope.schema == Event.schema
        else { return nil }
        return envelope.event
    }
}
