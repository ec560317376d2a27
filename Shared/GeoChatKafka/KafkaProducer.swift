import CRdKafka
import Logging
import Synchronization

/// Anything records can be sent to. Services depend on this seam, not on Kafka.
public protocol RecordSender: Sendable {
    /// Returns once the broker acknowledged the record (acks=all, idempotent).
    func send(topic: String, key: String?, value: [UInt8], partition: Int32?) async throws
}

/// The idempotent producer. Sends complete with the broker's delivery report.
/// A producer whose idempotence state turned fatal (as after a broker that lost
/// its memory) is replaced by a fresh one, so the service carries on alone.
public final class KafkaProducer: RecordSender {
    private let settings: KafkaSettings
    private let logger: Logger
    private let current: Mutex<RDKafkaProducerHandle?>

    public init(settings: KafkaSettings, logger: Logger) throws {
        self.settings = settings
        self.logger = logger
        self.current = Mutex(try RDKafkaProducerHandle(properties: settings.producerProperties))
    }

    public func send(topic: String, key: String?, value: [UInt8], partition: Int32? = nil) async throws {
        let handle = try activeHandle()
        let keyBytes = key.map { Array($0.utf8) }
        let outcome: rd_kafka_resp_err_t = await withCheckedContinuation { continuation in
            var queueFullRetries = 0
            while true {
                let completion = DeliveryCompletion { continuation.resume(returning: $0) }
                let err = handle.produce(
                    topic: topic, partition: partition, key: keyBytes, value: value, completion: completion)
                if err == RD_KAFKA_RESP_ERR_NO_ERROR { return }
                if err == RD_KAFKA_RESP_ERR__QUEUE_FULL && queueFullRetries < 100 {
                    // The local queue drains as the poll thread serves reports.
                    queueFullRetries += 1
                    usleep(1000)
                    continue
                }
                continuation.resume(returning: err)
                return
            }
        }
        guard outcome == RD_KAFKA_RESP_ERR_NO_ERROR else {
            KafkaMetrics.produceErrors[KafkaMetrics.topicLabel(topic)].increment()
            if handle.fatalError != nil || Self.needsFreshProducer(outcome) {
                replace(handle, reason: handle.fatalError ?? outcome.message)
            }
            throw KafkaError.delivery("\(topic): \(outcome.message)")
        }
        KafkaMetrics.produced[KafkaMetrics.topicLabel(topic)].increment()
    }

    private func activeHandle() throws -> RDKafkaProducerHandle {
        if let handle = current.withLock({ $0 }), handle.signals.lostAllBrokers.load(ordering: .acquiring) {
            replace(handle, reason: "all brokers were down; the broker may have lost our producer id")
        }
        return try current.withLock { slot in
            if let handle = slot { return handle }
            let handle = try RDKafkaProducerHandle(properties: settings.producerProperties)
            slot = handle
            return handle
        }
    }

    /// Errors after which this producer's idempotence state is useless: a broker
    /// that restarted without its memory (Tansu keeps everything in memory)
    /// answers UNKNOWN_PRODUCER_ID to the old producer id forever, and the
    /// records time out. A fresh handle asks for a new producer id.
    static func needsFreshProducer(_ error: rd_kafka_resp_err_t) -> Bool {
        switch error {
        case RD_KAFKA_RESP_ERR__FATAL, RD_KAFKA_RESP_ERR__MSG_TIMED_OUT, RD_KAFKA_RESP_ERR_UNKNOWN_PRODUCER_ID,
            RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
            return true
        default:
            return false
        }
    }

    private func replace(_ broken: RDKafkaProducerHandle, reason: String) {
        let replaced = current.withLock { slot -> Bool in
            // At most one replacement every two seconds: while the broker is simply
            // down, every record times out, and a new handle would not help.
            guard slot === broken, ContinuousClock.now - broken.createdAt > .seconds(2) else { return false }
            slot = nil
            return true
        }
        guard replaced else { return }
        logger.warning("kafka producer replaced by a fresh one", metadata: ["reason": "\(reason)"])
        Thread.detachNewThread { broken.close(flushTimeoutMs: 0) }
    }

    /// Flushes and frees the handle (graceful shutdown).
    public func close() {
        let handle = current.withLock { slot -> RDKafkaProducerHandle? in
            defer { slot = nil }
            return slot
        }
        handle?.close()
    }

    /// The raw client handle for topic administration.
    func withClient<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        try body(try activeHandle().client)
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
