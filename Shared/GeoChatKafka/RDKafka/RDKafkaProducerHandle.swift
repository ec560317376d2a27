import CRdKafka
import Foundation
import Synchronization

/// One librdkafka producer handle and the thread that serves its delivery reports.
///
/// `@unchecked Sendable`: librdkafka documents `rd_kafka_t` and topic handles as
/// thread-safe; the only Swift state (topic cache, flags) is behind `Mutex`/`Atomic`.
final class RDKafkaProducerHandle: @unchecked Sendable {
    private let handle: OpaquePointer
    private let topics = Mutex(KnownTopics())
    private let stopped = Atomic<Bool>(false)
    /// Set when `close` begins: records offered after it fail at once.
    private let closing = Atomic<Bool>(false)
    private let pollerDone = DispatchSemaphore(value: 0)

    let createdAt = ContinuousClock.now
    let signals = ProducerSignals()

    init(properties: [String: String]) throws(KafkaError) {
        let conf = try RDKafkaConfig.make(properties)
        rd_kafka_conf_set_dr_msg_cb(conf, deliveryReportCallback)
        rd_kafka_conf_set_error_cb(conf, producerErrorCallback)
        // Unretained: `signals` lives as long as this handle, which outlives the client.
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(signals).toOpaque())
        handle = try RDKafkaConfig.client(type: RD_KAFKA_PRODUCER, conf: conf)
        let thread = Thread { [self] in
            // A delivery report ends the wait at once; the timeout is only how
            // often an idle producer wakes (`close` interrupts it).
            while !stopped.load(ordering: .acquiring) { rd_kafka_poll(handle, 1000) }
            pollerDone.signal()
        }
        thread.name = "rdkafka-producer-poll"
        thread.start()
    }

    /// Enqueues a copy of the record; `completion` runs once the broker answered.
    private func produce(
        topic: String, partition: Int32?, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader],
        completion: DeliveryCompletion
    ) -> rd_kafka_resp_err_t {
        let rkt = topicHandle(topic)
        // A record in the queue holds its topic: this reference may go at once.
        defer { rd_kafka_topic_destroy(rkt) }
        let opaque = Unmanaged.passRetained(completion).toOpaque()
        guard headers.isEmpty else {
            return produceWithHeaders(
                rkt, partition: partition, key: key, value: value, headers: headers, opaque: opaque)
        }
        let status: Int32 = value.withUnsafeBytes { payload in
            func send(_ keyPointer: UnsafeRawPointer?, _ keyLength: Int) -> Int32 {
                rd_kafka_produce(
                    rkt, partition ?? RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY,
                    UnsafeMutableRawPointer(mutating: payload.baseAddress), payload.count,
                    keyPointer, keyLength, opaque)
            }
            if let key { return key.withUnsafeBytes { send($0.baseAddress, $0.count) } }
            return send(nil, 0)
        }
        if status != 0 {
            Unmanaged<DeliveryCompletion>.fromOpaque(opaque).release()
            return rd_kafka_last_error()
        }
        return RD_KAFKA_RESP_ERR_NO_ERROR
    }

    /// The same through `rd_kafka_produceva` (`rd_kafka_producev` is variadic
    /// C, which Swift cannot call), which also takes headers; librdkafka copies
    /// the value, the key and every header before it returns.
    private func produceWithHeaders(
        _ rkt: OpaquePointer, partition: Int32?, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader],
        opaque: UnsafeMutableRawPointer
    ) -> rd_kafka_resp_err_t {
        // Copies that live until the call returns: names as C strings, values as bytes.
        let names = headers.map { strdup($0.name)! }
        let values = headers.map { header -> UnsafeMutableRawPointer in
            let bytes = UnsafeMutableRawPointer.allocate(byteCount: max(header.value.count, 1), alignment: 1)
            header.value.withUnsafeBytes { bytes.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            return bytes
        }
        let payload = UnsafeMutableRawPointer.allocate(byteCount: max(value.count, 1), alignment: 1)
        value.withUnsafeBytes { if let base = $0.baseAddress { payload.copyMemory(from: base, byteCount: $0.count) } }
        let keyBytes = key.map { key -> UnsafeMutableRawPointer in
            let bytes = UnsafeMutableRawPointer.allocate(byteCount: max(key.count, 1), alignment: 1)
            key.withUnsafeBytes { if let base = $0.baseAddress { bytes.copyMemory(from: base, byteCount: $0.count) } }
            return bytes
        }
        defer {
            for name in names { free(name) }
            for bytes in values { bytes.deallocate() }
            payload.deallocate()
            keyBytes?.deallocate()
        }
        var fields: [rd_kafka_vu_t] = []
        func field(_ type: rd_kafka_vtype_t, _ set: (inout rd_kafka_vu_t) -> Void) {
            var vu = rd_kafka_vu_t()
            vu.vtype = type
            set(&vu)
            fields.append(vu)
        }
        field(RD_KAFKA_VTYPE_RKT) { $0.u.rkt = rkt }
        field(RD_KAFKA_VTYPE_PARTITION) { $0.u.i32 = partition ?? RD_KAFKA_PARTITION_UA }
        field(RD_KAFKA_VTYPE_MSGFLAGS) { $0.u.i = RD_KAFKA_MSG_F_COPY }
        field(RD_KAFKA_VTYPE_VALUE) {
            $0.u.mem.ptr = payload
            $0.u.mem.size = value.count
        }
        if let keyBytes, let key {
            field(RD_KAFKA_VTYPE_KEY) {
                $0.u.mem.ptr = keyBytes
                $0.u.mem.size = key.count
            }
        }
        field(RD_KAFKA_VTYPE_OPAQUE) { $0.u.ptr = opaque }
        for (index, header) in headers.enumerated() {
            field(RD_KAFKA_VTYPE_HEADER) {
                $0.u.header.name = UnsafePointer(names[index])
                $0.u.header.val = UnsafeRawPointer(values[index])
                $0.u.header.size = header.value.count
            }
        }
        guard
            let error = fields.withUnsafeBufferPointer({ rd_kafka_produceva(handle, $0.baseAddress, $0.count) })
        else { return RD_KAFKA_RESP_ERR_NO_ERROR }
        defer { rd_kafka_error_destroy(error) }
        Unmanaged<DeliveryCompletion>.fromOpaque(opaque).release()
        return rd_kafka_error_code(error)
    }

    private var fatalError: String? {
        var errstr = [CChar](repeating: 0, count: 512)
        let err = rd_kafka_fatal_error(handle, &errstr, errstr.count)
        return err == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : String(errorBuffer: errstr)
    }

    /// Waits for outstanding deliveries (bounded), fails what is left (so every
    /// waiting sender gets an answer) and stops the poll thread. The client is
    /// freed only when the last reference goes (deinit): topic administration
    /// still running on another thread (the provisioner's metadata checks, while
    /// a producer is replaced after a broker outage) keeps it alive instead of
    /// touching freed memory (a SIGSEGV in `rd_kafka_broker_any_usable`, seen in
    /// the fault harness).
    func close(flushTimeoutMs: Int32 = 5000) {
        guard !closing.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = rd_kafka_flush(handle, flushTimeoutMs)
        _ = rd_kafka_purge(handle, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
        var waited = 0
        while rd_kafka_outq_len(handle) > 0 && waited < 200 {
            usleep(10_000)  // the poll thread serves the purged records' reports
            waited += 1
        }
        stopped.store(true, ordering: .releasing)
        rd_kafka_yield(handle)
        pollerDone.wait()
        topics.withLock { known in
            for entry in known.handles.values { rd_kafka_topic_destroy(entry.rkt) }
            known.handles.removeAll()
        }
    }

    deinit {
        rd_kafka_destroy(handle)
    }

    /// Sends one record and waits for the broker's answer. A full local queue
    /// is waited out (the poll thread drains it) for up to about 100 ms.
    func send(
        topic: String, partition: Int32?, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader] = []
    ) async -> DeliveryOutcome {
        await enqueue(topic: topic, partition: partition, key: key, value: value, headers: headers).outcome()
    }

    /// Hands the record to librdkafka now, so records enqueued one after another
    /// keep their order (the idempotent producer keeps it on the wire), and
    /// answers a ticket that completes with the broker's answer.
    func enqueue(
        topic: String, partition: Int32?, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader] = []
    ) -> DeliveryTicket {
        let ticket = DeliveryTicket()
        guard !closing.load(ordering: .acquiring) else {
            ticket.complete(.failed("producer closed", needsFreshProducer: true))
            return ticket
        }
        var queueFullRetries = 0
        while true {
            let completion = DeliveryCompletion { [self] err in ticket.complete(outcome(err)) }
            let err = produce(
                topic: topic, partition: partition, key: key, value: value, headers: headers, completion: completion)
            if err == RD_KAFKA_RESP_ERR_NO_ERROR { return ticket }
            if err == RD_KAFKA_RESP_ERR__QUEUE_FULL && queueFullRetries < 100 {
                queueFullRetries += 1
                usleep(1000)
                continue
            }
            ticket.complete(outcome(err))
            return ticket
        }
    }

    private func outcome(_ err: rd_kafka_resp_err_t) -> DeliveryOutcome {
        guard err != RD_KAFKA_RESP_ERR_NO_ERROR else { return .delivered }
        return .failed(err.message, needsFreshProducer: fatalError != nil || Self.needsFreshProducer(err))
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

    /// Deletes the topics (one already gone counts as deleted).
    func deleteTopics(_ names: [String], timeoutMs: Int32) throws(KafkaError) {
        try RDKafkaAdmin.deleteTopics(client: handle, names, timeoutMs: timeoutMs)
    }

    /// Deletes the consumer groups; the names the broker deleted.
    func deleteGroups(_ names: [String], timeoutMs: Int32) throws(KafkaError) -> [String] {
        try RDKafkaAdmin.deleteGroups(client: handle, names, timeoutMs: timeoutMs)
    }

    func groupNames(timeoutMs: Int32) throws(KafkaError) -> [String] {
        try RDKafkaAdmin.groupNames(client: handle, timeoutMs: timeoutMs)
    }

    /// Creates the topics that do not exist yet ("already exists" is success).
    func createTopics(
        _ topics: [(name: String, partitions: Int, config: [String: String])], replicationFactor: Int, timeoutMs: Int32
    ) throws(KafkaError) {
        try RDKafkaAdmin.createTopics(
            client: handle, topics, replicationFactor: replicationFactor, timeoutMs: timeoutMs)
    }

    func topicNames(timeoutMs: Int32) throws(KafkaError) -> [String] {
        try RDKafkaAdmin.topicNames(client: handle, timeoutMs: timeoutMs)
    }

    func existingTopics(_ names: [String], timeoutMs: Int32) throws(KafkaError) -> Set<String> {
        try RDKafkaAdmin.existingTopics(client: handle, names, timeoutMs: timeoutMs)
    }

    func partitionCount(_ topic: String, timeoutMs: Int32) throws(KafkaError) -> Int {
        try RDKafkaAdmin.partitionCount(client: handle, topic: topic, timeoutMs: timeoutMs)
    }

    func highWatermarks(_ topic: String, timeoutMs: Int32) throws(KafkaError) -> [Int32: Int64] {
        try RDKafkaAdmin.highWatermarks(client: handle, topic: topic, timeoutMs: timeoutMs)
    }

    /// Topics the client keeps handles for: the 64 used most lately. A topic's
    /// handle makes the client refresh its metadata every few seconds; topics
    /// that rotate (`TopicGenerations`, reply topics) are used for a while and
    /// then never again, so the least lately used handle is let go. (Kept for
    /// ever, a broker restart made the client refresh dozens of topics the
    /// broker no longer had, the path on which librdkafka 2.16's metadata cache
    /// crashed, docs/architecture.md "Request/reply".)
    static let keptTopics = 64

    struct KnownTopics {
        var handles: [String: (rkt: OpaquePointer, lastUse: UInt64)] = [:]
        var uses: UInt64 = 0
    }

    /// A reference of the caller's own to the topic's handle (the caller destroys
    /// it): a handle let go meanwhile by another thread stays valid for it.
    private func topicHandle(_ name: String) -> OpaquePointer {
        topics.withLock { known in
            known.uses += 1
            if known.handles[name] != nil {
                known.handles[name]!.lastUse = known.uses
            } else {
                if known.handles.count >= Self.keptTopics,
                    let oldest = known.handles.min(by: { $0.value.lastUse < $1.value.lastUse })
                {
                    rd_kafka_topic_destroy(oldest.value.rkt)
                    known.handles[oldest.key] = nil
                }
                known.handles[name] = (rd_kafka_topic_new(handle, name, nil)!, known.uses)
            }
            // Another reference to the same topic object (librdkafka counts them).
            return rd_kafka_topic_new(handle, name, nil)!
        }
    }
}

private func producerErrorCallback(
    _ rk: OpaquePointer?, _ error: Int32, _ reason: UnsafePointer<CChar>?, _ opaque: UnsafeMutableRawPointer?
) {
    guard let opaque, error == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN.rawValue else { return }
    Unmanaged<ProducerSignals>.fromOpaque(opaque).takeUnretainedValue().lostAllBrokers.store(true, ordering: .releasing)
}

/// A capture-free global so it converts to a C function pointer.
private func deliveryReportCallback(
    _ rk: OpaquePointer?, _ message: UnsafePointer<rd_kafka_message_t>?, _ opaque: UnsafeMutableRawPointer?
) {
    guard let message, let token = message.pointee._private else { return }
    let completion = Unmanaged<DeliveryCompletion>.fromOpaque(token).takeRetainedValue()
    completion.body(message.pointee.err)
}
