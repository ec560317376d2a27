import CRdKafka

extension RDKafkaAdmin {
    /// Each partition's high watermark (the offset the next record gets), asked
    /// of the broker now. Works through any client handle.
    static func highWatermarks(client: OpaquePointer, topic: String, timeoutMs: Int32) throws(KafkaError) -> [Int32:
        Int64]
    {
        let count = try partitionCount(client: client, topic: topic, timeoutMs: timeoutMs)
        var ends: [Int32: Int64] = [:]
        for partition in 0..<Int32(count) {
            var low: Int64 = 0
            var high: Int64 = 0
            let err = rd_kafka_query_watermark_offsets(client, topic, partition, &low, &high, timeoutMs)
            if err != RD_KAFKA_RESP_ERR_NO_ERROR {
                throw KafkaError.admin("watermarks of \(topic)[\(partition)]: \(err.message)")
            }
            ends[partition] = high
        }
        return ends
    }

    /// Takes the partitions without a group, each from its first record.
    static func assignFromBeginning(consumer: OpaquePointer, _ partitions: [PartitionID]) throws(KafkaError) {
        let list = rd_kafka_topic_partition_list_new(Int32(partitions.count))!
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for p in partitions {
            rd_kafka_topic_partition_list_add(list, p.topic, p.partition).pointee.offset = Int64(
                RD_KAFKA_OFFSET_BEGINNING)
        }
        let err = rd_kafka_assign(consumer, list)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError.client("assign: \(err.message)") }
    }
}
