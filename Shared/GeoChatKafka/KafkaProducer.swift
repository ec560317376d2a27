import Foundation
import Logging
import Synchronization

/// The producer (idempotent on Kafka; not on Tansu, `KafkaSettings.producerProperties`).
/// Sends complete with the broker's delivery report.
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

    public func send(
        topic: String, key: String?, value: [UInt8], partition: Int32? = nil, headers: [KafkaHeader] = []
    ) async throws {
        try await enqueue(topic: topic, key: key, value: value, partition: partition, headers: headers).wait()
    }

    public func enqueue(
        topic: String, key: String?, value: [UInt8], partition: Int32? = nil, headers: [KafkaHeader] = []
    ) -> RecordDelivery {
        let handle: RDKafkaProducerHandle
        do { handle = try activeHandle() } catch { return .completed(error) }
        let physical = settings.generations?.physical(topic, atMs: wallClockMs()) ?? topic
        let ticket = handle.enqueue(
            topic: physical, partition: partition, key: key.map { Array($0.utf8) }, value: value, headers: headers)
        return RecordDelivery { [self] in
            guard case .failed(let reason, let needsFreshProducer) = await ticket.outcome() else {
                KafkaMetrics.produced[settings.metricLabel(topic)].increment()
                KafkaMetrics.producedBytes[settings.metricLabel(topic)].increment(
                    by: value.count + (key?.utf8.count ?? 0))
                return
            }
            KafkaMetrics.produceErrors[settings.metricLabel(topic)].increment()
            if needsFreshProducer { replace(handle, reason: reason) }
            throw KafkaError.delivery("\(physical): \(reason)")
        }
    }

    private func activeHandle() throws -> RDKafkaProducerHandle {
        if settings.profile.replacesProducerAfterOutage, let handle = current.withLock({ $0 }),
            handle.signals.lostAllBrokers.load(ordering: .acquiring)
        {
            replace(handle, reason: "all brokers were down; the broker may have lost our producer id")
        }
        return try current.withLock { slot in
            if let handle = slot { return handle }
            let handle = try RDKafkaProducerHandle(properties: settings.producerProperties)
            slot = handle
            return handle
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

    /// Topic administration through this producer's client.
    func administer<T>(_ body: (RDKafkaProducerHandle) throws -> T) throws -> T {
        try body(try activeHandle())
    }

    /// Topic administration through a client made for it and closed after:
    /// for topics made and deleted while the process runs (a requester's reply
    /// topics). librdkafka 2.16 crashed in its metadata cache (a SIGSEGV in
    /// `rd_kafka_metadata_cache_find`) when a topic its long-lived client had
    /// made, or read, was deleted; a client that is gone cannot.
    func administerApart<T>(_ body: (RDKafkaProducerHandle) throws -> T) throws -> T {
        let client = try RDKafkaProducerHandle(properties: settings.adminProperties)
        defer { client.close(flushTimeoutMs: 0) }
        return try body(client)
    }
}
