import CRdKafka

/// Topic administration through any client handle.
enum RDKafkaAdmin {
    /// Creates the topics that do not exist; "already exists" counts as success,
    /// so several instances may start at once.
    static func createTopics(
        client: OpaquePointer, _ topics: [(name: String, partitions: Int, config: [String: String])],
        replicationFactor: Int, timeoutMs: Int32
    ) throws(KafkaError) {
        var errstr = [CChar](repeating: 0, count: 512)
        var newTopics: [OpaquePointer?] = []
        defer { for t in newTopics { rd_kafka_NewTopic_destroy(t) } }
        for topic in topics {
            guard
                let t = rd_kafka_NewTopic_new(
                    topic.name, Int32(topic.partitions), Int32(replicationFactor), &errstr, errstr.count)
            else { throw KafkaError.admin("\(topic.name): \(String(errorBuffer: errstr))") }
            newTopics.append(t)
            for (key, value) in topic.config.sorted(by: { $0.key < $1.key }) {
                let err = rd_kafka_NewTopic_set_config(t, key, value)
                if err != RD_KAFKA_RESP_ERR_NO_ERROR {
                    throw KafkaError.admin("\(topic.name): \(key)=\(value): \(err.message)")
                }
            }
        }
        let queue = rd_kafka_queue_new(client)!
        defer { rd_kafka_queue_destroy(queue) }
        let options = rd_kafka_AdminOptions_new(client, RD_KAFKA_ADMIN_OP_CREATETOPICS)
        defer { rd_kafka_AdminOptions_destroy(options) }
        _ = rd_kafka_AdminOptions_set_request_timeout(options, timeoutMs, &errstr, errstr.count)
        _ = rd_kafka_AdminOptions_set_operation_timeout(options, timeoutMs, &errstr, errstr.count)
        newTopics.withUnsafeMutableBufferPointer { buffer in
            rd_kafka_CreateTopics(client, buffer.baseAddress, buffer.count, options, queue)
        }
        guard let event = rd_kafka_queue_poll(queue, timeoutMs + 1000) else {
            throw KafkaError.admin("create topics: no answer within \(timeoutMs) ms")
        }
        defer { rd_kafka_event_destroy(event) }
        let eventError = rd_kafka_event_error(event)
        if eventError != RD_KAFKA_RESP_ERR_NO_ERROR {
            throw KafkaError.admin("create topics: \(eventError.message)")
        }
        guard let result = rd_kafka_event_CreateTopics_result(event) else {
            throw KafkaError.admin("create topics: unexpected answer")
        }
        var count = 0
        guard let results = rd_kafka_CreateTopics_result_topics(result, &count) else { return }
        for i in 0..<count {
            let err = rd_kafka_topic_result_error(results[i])
            if err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS {
                let name = String(cString: rd_kafka_topic_result_name(results[i]))
                throw KafkaError.admin("\(name): \(err.message)")
            }
        }
    }

    /// The number of partitions a topic has now, from the broker's metadata.
    /// Deletes the topics; one already gone counts as deleted.
    static func deleteTopics(client: OpaquePointer, _ names: [String], timeoutMs: Int32) throws(KafkaError) {
        var errstr = [CChar](repeating: 0, count: 512)
        var deletions: [OpaquePointer?] = names.map { rd_kafka_DeleteTopic_new($0) }
        defer { for d in deletions { rd_kafka_DeleteTopic_destroy(d) } }
        let queue = rd_kafka_queue_new(client)!
        defer { rd_kafka_queue_destroy(queue) }
        let options = rd_kafka_AdminOptions_new(client, RD_KAFKA_ADMIN_OP_DELETETOPICS)
        defer { rd_kafka_AdminOptions_destroy(options) }
        _ = rd_kafka_AdminOptions_set_request_timeout(options, timeoutMs, &errstr, errstr.count)
        deletions.withUnsafeMutableBufferPointer { buffer in
            rd_kafka_DeleteTopics(client, buffer.baseAddress, buffer.count, options, queue)
        }
        guard let event = rd_kafka_queue_poll(queue, timeoutMs + 1000) else {
            throw KafkaError.admin("delete topics: no answer within \(timeoutMs) ms")
        }
        defer { rd_kafka_event_destroy(event) }
        let eventError = rd_kafka_event_error(event)
        if eventError != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError.admin("delete topics: \(eventError.message)") }
        guard let result = rd_kafka_event_DeleteTopics_result(event) else {
            throw KafkaError.admin("delete topics: unexpected answer")
        }
        var count = 0
        guard let results = rd_kafka_DeleteTopics_result_topics(result, &count) else { return }
        for i in 0..<count {
            let err = rd_kafka_topic_result_error(results[i])
            if err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART {
                throw KafkaError.admin("\(String(cString: rd_kafka_topic_result_name(results[i]))): \(err.message)")
            }
        }
    }

    static func partitionCount(client: OpaquePointer, topic: String, timeoutMs: Int32) throws(KafkaError) -> Int {
        let rkt = rd_kafka_topic_new(client, topic, nil)
        defer { rd_kafka_topic_destroy(rkt) }
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let err = rd_kafka_metadata(client, 0, rkt, &metadata, timeoutMs)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            throw KafkaError.admin("metadata for \(topic): \(err.message)")
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        guard metadata.pointee.topic_cnt > 0 else { throw KafkaError.admin("metadata for \(topic): no topic") }
        let t = metadata.pointee.topics[0]
        if t.err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError.admin("metadata for \(topic): \(t.err.message)") }
        return Int(t.partition_cnt)
    }
}
