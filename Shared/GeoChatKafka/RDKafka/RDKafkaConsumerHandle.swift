import CRdKafka
import Foundation

/// One librdkafka consumer handle.
///
/// `@unchecked Sendable`: `rd_kafka_t` is thread-safe; `poll` and `close` are only
/// called from the owner's serial queue, the remaining calls are thread-safe C.
final class RDKafkaConsumerHandle: @unchecked Sendable {
    private let handle: OpaquePointer
    /// The raw client, for metadata calls (thread-safe).
    func partitionCount(_ topic: String, timeoutMs: Int32) throws(KafkaError) -> Int {
        try RDKafkaAdmin.partitionCount(client: handle, topic: topic, timeoutMs: timeoutMs)
    }

    func highWatermarks(_ topic: String, timeoutMs: Int32) throws(KafkaError) -> [Int32: Int64] {
        try RDKafkaAdmin.highWatermarks(client: handle, topic: topic, timeoutMs: timeoutMs)
    }

    /// Takes the partitions without a group, each from its first record.
    func assignFromBeginning(_ partitions: [PartitionID]) throws(KafkaError) {
        try RDKafkaAdmin.assignFromBeginning(consumer: handle, partitions)
    }

    init(properties: [String: String]) throws(KafkaError) {
        let conf = try RDKafkaConfig.make(properties)
        handle = try RDKafkaConfig.client(type: RD_KAFKA_CONSUMER, conf: conf)
        // Route everything (including rebalance events) through consumer_poll.
        rd_kafka_poll_set_consumer(handle)
    }

    func subscribe(_ topics: [String]) throws(KafkaError) {
        let list = rd_kafka_topic_partition_list_new(Int32(topics.count))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for topic in topics { rd_kafka_topic_partition_list_add(list, topic, RD_KAFKA_PARTITION_UA) }
        let err = rd_kafka_subscribe(handle, list)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError.client("subscribe: \(err.message)") }
    }

    /// Takes the given partitions without a group, starting at each one's high
    /// watermark as the broker reports it now. An explicit offset (rather than
    /// the logical "end", resolved later) means every record produced after this
    /// call returns is read: readers can rely on that once it returned.
    /// Returns the offset each partition starts at.
    func assignFromEnd(_ partitions: [PartitionID], timeoutMs: Int32) throws(KafkaError) -> [PartitionID: Int64] {
        let list = rd_kafka_topic_partition_list_new(Int32(partitions.count))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        var starts: [PartitionID: Int64] = [:]
        for p in partitions {
            let high = try watermarks(p, timeoutMs: timeoutMs).high
            rd_kafka_topic_partition_list_add(list, p.topic, p.partition).pointee.offset = high
            starts[p] = high
        }
        let err = rd_kafka_assign(handle, list)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError.client("assign: \(err.message)") }
        return starts
    }

    /// Takes the given partitions without a group, each at the given offset. A new
    /// assignment wakes librdkafka's fetcher at once; a resumed pause waits for
    /// its next round, up to a second (docs/benchmarks.md, "Idle").
    func assign(_ positions: [PartitionID: Int64]) throws(KafkaError) {
        let list = rd_kafka_topic_partition_list_new(Int32(positions.count))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for (p, offset) in positions {
            rd_kafka_topic_partition_list_add(list, p.topic, p.partition).pointee.offset = offset
        }
        let err = rd_kafka_assign(handle, list)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError.client("assign: \(err.message)") }
    }

    /// Gives up every partition (no group: nothing is committed); fetching stops.
    func unassignAll() throws(KafkaError) {
        let err = rd_kafka_assign(handle, nil)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError.client("unassign: \(err.message)") }
    }

    /// The partition's low and high watermarks as its leader reports them now (blocks).
    func watermarks(_ p: PartitionID, timeoutMs: Int32) throws(KafkaError) -> (low: Int64, high: Int64) {
        var low: Int64 = 0
        var high: Int64 = 0
        let err = rd_kafka_query_watermark_offsets(handle, p.topic, p.partition, &low, &high, timeoutMs)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR {
            throw KafkaError.client("watermarks of \(p.topic)[\(p.partition)]: \(err.message)")
        }
        return (low, high)
    }

    /// The high watermark the partition's last fetch response carried (no
    /// network; nil before the first one). It is at least the offset after
    /// every record delivered from that response, however busy the broker.
    func lastFetchedHighWatermark(_ p: PartitionID) -> Int64? {
        var low: Int64 = 0
        var high: Int64 = 0
        let err = rd_kafka_get_watermark_offsets(handle, p.topic, p.partition, &low, &high)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR, high >= 0 else { return nil }
        return high
    }

    /// The group's committed offsets of the partitions (those without one are left out; blocks).
    func committed(_ partitions: [PartitionID], timeoutMs: Int32) throws(KafkaError) -> [PartitionID: Int64] {
        let list = rd_kafka_topic_partition_list_new(Int32(partitions.count))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for p in partitions { rd_kafka_topic_partition_list_add(list, p.topic, p.partition) }
        let err = rd_kafka_committed(handle, list, timeoutMs)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError.client("committed offsets: \(err.message)") }
        var offsets: [PartitionID: Int64] = [:]
        for i in 0..<Int(list.pointee.cnt) {
            let element = list.pointee.elems[i]
            if element.offset >= 0 {
                offsets[PartitionID(topic: String(cString: element.topic), partition: element.partition)] =
                    element.offset
            }
        }
        return offsets
    }

    /// Commits the offsets stored so far now, without waiting for the answer.
    func commitStoredSoon() {
        _ = rd_kafka_commit(handle, nil, 1)
    }

    /// Moves assigned partitions back to their first record (blocks until the
    /// fetcher dropped what it had prefetched from the old position).
    func seekToBeginning(_ partitions: [PartitionID], timeoutMs: Int32) throws(KafkaError) {
        let list = rd_kafka_topic_partition_list_new(Int32(partitions.count))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for p in partitions {
            rd_kafka_topic_partition_list_add(list, p.topic, p.partition).pointee.offset = Int64(
                RD_KAFKA_OFFSET_BEGINNING)
        }
        if let error = rd_kafka_seek_partitions(handle, list, timeoutMs) {
            defer { rd_kafka_error_destroy(error) }
            throw KafkaError.client("seek: \(String(cString: rd_kafka_error_string(error)))")
        }
    }

    enum PollResult {
        case record(KafkaRecord)
        case nothing
        case error(String)
    }

    func poll(timeoutMs: Int32) -> PollResult {
        guard let message = rd_kafka_consumer_poll(handle, timeoutMs) else { return .nothing }
        defer { rd_kafka_message_destroy(message) }
        let m = message.pointee
        if m.err != RD_KAFKA_RESP_ERR_NO_ERROR {
            if m.err == RD_KAFKA_RESP_ERR__PARTITION_EOF { return .nothing }
            let topic = m.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? "-"
            return .error("\(topic)[\(m.partition)]: \(m.err.message)")
        }
        let value = m.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: m.len)) } ?? []
        let key = m.key.map { Array(UnsafeRawBufferPointer(start: $0, count: m.key_len)) }
        return .record(
            KafkaRecord(
                topic: String(cString: rd_kafka_topic_name(m.rkt)), partition: m.partition, offset: m.offset,
                key: key, value: value, headers: Self.headers(of: message)))
    }

    /// The record's headers, copied out (none: the common case, answered without a copy).
    private static func headers(of message: UnsafeMutablePointer<rd_kafka_message_t>) -> [KafkaHeader] {
        var list: OpaquePointer?
        guard rd_kafka_message_headers(message, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return [] }
        var headers: [KafkaHeader] = []
        var index = 0
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(list, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            index += 1
            guard let name else { continue }
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            headers.append(KafkaHeader(name: String(cString: name), value: bytes))
        }
        return headers
    }

    /// Marks a record processed; the next auto-commit includes it.
    func storeOffset(topic: String, partition: Int32, offset: Int64) {
        let list = rd_kafka_topic_partition_list_new(1)!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        rd_kafka_topic_partition_list_add(list, topic, partition).pointee.offset = offset + 1
        // Fails only for a partition no longer ours after a rebalance: then the new
        // owner processes it again, which idempotency keys make harmless.
        _ = rd_kafka_offsets_store(handle, list)
    }

    func assignment() -> [TopicAssignment] {
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        guard rd_kafka_assignment(handle, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return [] }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        var byTopic: [String: [Int32]] = [:]
        for i in 0..<Int(list.pointee.cnt) {
            let element = list.pointee.elems[i]
            byTopic[String(cString: element.topic), default: []].append(element.partition)
        }
        return byTopic.keys.sorted().map { TopicAssignment(topic: $0, partitions: byTopic[$0]!.sorted()) }
    }

    /// Records behind the end, summed per topic over the partitions held now:
    /// the high watermark librdkafka last saw (cached from fetch answers, no broker
    /// round trip) minus this consumer's position. Partitions not read yet count 0.
    func lagByTopic() -> [String: Int64] {
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        guard rd_kafka_assignment(handle, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return [:] }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        guard rd_kafka_position(handle, list) == RD_KAFKA_RESP_ERR_NO_ERROR else { return [:] }
        var lag: [String: Int64] = [:]
        for i in 0..<Int(list.pointee.cnt) {
            let element = list.pointee.elems[i]
            var low: Int64 = 0
            var high: Int64 = 0
            let known = rd_kafka_get_watermark_offsets(handle, element.topic, element.partition, &low, &high)
            let measurable = known == RD_KAFKA_RESP_ERR_NO_ERROR && high >= 0 && element.offset >= 0
            lag[String(cString: element.topic), default: 0] += measurable ? max(0, high - element.offset) : 0
        }
        return lag
    }

    /// Leaves the group, committing stored offsets. The handle is freed only
    /// when the last reference goes (deinit): a watermark or lag query still
    /// running on another thread keeps it alive instead of touching freed memory.
    func close() {
        _ = rd_kafka_consumer_close(handle)
    }

    /// Makes a `poll` waiting on another thread return now (thread-safe).
    func interruptPoll() {
        guard let queue = rd_kafka_queue_get_consumer(handle) else { return }
        rd_kafka_queue_yield(queue)
        rd_kafka_queue_destroy(queue)
    }

    deinit {
        rd_kafka_destroy(handle)
    }
}
