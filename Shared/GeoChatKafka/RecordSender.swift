import Foundation
import Logging
import Synchronization

/// Anything records can be sent to. Services depend on this seam, not on Kafka.
public protocol RecordSender: Sendable {
    /// Returns once the broker acknowledged the record (acks=all, idempotent).
    func send(topic: String, key: String?, value: [UInt8], partition: Int32?, headers: [KafkaHeader]) async throws
    /// Hands the record over now (records enqueued one after another keep their
    /// order) without waiting; the delivery ends with the broker's answer.
    func enqueue(
        topic: String, key: String?, value: [UInt8], partition: Int32?, headers: [KafkaHeader]
    ) -> RecordDelivery
}

extension RecordSender {
    /// A record without headers.
    public func send(topic: String, key: String?, value: [UInt8], partition: Int32?) async throws {
        try await send(topic: topic, key: key, value: value, partition: partition, headers: [])
    }

    /// A record without headers.
    public func enqueue(topic: String, key: String?, value: [UInt8], partition: Int32?) -> RecordDelivery {
        enqueue(topic: topic, key: key, value: value, partition: partition, headers: [])
    }
}

/// A record handed to the producer: `wait()` returns once the broker
/// acknowledged it, or throws what went wrong.
public struct RecordDelivery: Sendable {
    private let outcome: @Sendable () async throws -> Void

    public init(_ outcome: @escaping @Sendable () async throws -> Void) { self.outcome = outcome }

    /// A delivery that already ended: delivered (nil) or failed.
    public static func completed(_ error: (any Error)?) -> RecordDelivery {
        RecordDelivery { if let error { throw error } }
    }

    public func wait() async throws { try await outcome() }
}
