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
        try topicOperation(
            "create topics", client: client, operation: RD_KAFKA_ADMIN_OP_CREATETOPICS, timeoutMs: timeoutMs,
            done: RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS,
            submit: { options, queue in
                newTopics.withUnsafeMutableBufferPointer { buffer in
                    rd_kafka_CreateTopics(client, buffer.baseAddress, buffer.count, options, queue)
                }
            },
            results: { event, count in
                rd_kafka_event_CreateTopics_result(event).flatMap { rd_kafka_CreateTopics_result_topics($0, &count) }
            })
    }

    /// Deletes the topics; one already gone counts as deleted.
    static func deleteTopics(client: OpaquePointer, _ names: [String], timeoutMs: Int32) throws(KafkaError) {
        var deletions: [OpaquePointer?] = names.map { rd_kafka_DeleteTopic_new($0) }
        defer { for d in deletions { rd_kafka_DeleteTopic_destroy(d) } }
        try topicOperation(
            "delete topics", client: client, operation: RD_KAFKA_ADMIN_OP_DELETETOPICS, timeoutMs: timeoutMs,
            done: RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
            submit: { options, queue in
                deletions.withUnsafeMutableBufferPointer { buffer in
                    rd_kafka_DeleteTopics(client, buffer.baseAddress, buffer.count, options, queue)
                }
            },
            results: { event, count in
                rd_kafka_event_DeleteTopics_result(event).flatMap { rd_kafka_DeleteTopics_result_topics($0, &count) }
            })
    }

    /// Deletes the consumer groups (their committed offsets with them); the
    /// names the broker deleted. One already gone, or one the broker refuses
    /// to delete (still has members), is left out, not an error: the next
    /// prune asks again.
    static func deleteGroups(client: OpaquePointer, _ names: [String], timeoutMs: Int32) throws(KafkaError) -> [String]
    {
        var deletions: [OpaquePointer?] = names.map { rd_kafka_DeleteGroup_new($0) }
        defer { for d in deletions { rd_kafka_DeleteGroup_destroy(d) } }
        let event = try adminRequest(
            "delete groups", client: client, operation: RD_KAFKA_ADMIN_OP_DELETEGROUPS, timeoutMs: timeoutMs
        ) { options, queue in
            deletions.withUnsafeMutableBufferPointer { buffer in
                rd_kafka_DeleteGroups(client, buffer.baseAddress, buffer.count, options, queue)
            }
        }
        defer { rd_kafka_event_destroy(event) }
        var count = 0
        guard let result = rd_kafka_event_DeleteGroups_result(event),
            let groups = rd_kafka_DeleteGroups_result_groups(result, &count)
        else { return [] }
        return (0..<count).compactMap { i -> String? in
            guard let group = groups[i] else { return nil }
            let code = rd_kafka_group_result_error(group).map { rd_kafka_error_code($0) } ?? RD_KAFKA_RESP_ERR_NO_ERROR
            guard code == RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
            return String(cString: rd_kafka_group_result_name(group))
        }
    }

    /// The consumer groups the broker lists now.
    static func groupNames(client: OpaquePointer, timeoutMs: Int32) throws(KafkaError) -> [String] {
        let event = try adminRequest(
            "list groups", client: client, operation: RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPS, timeoutMs: timeoutMs
        ) { options, queue in
            rd_kafka_ListConsumerGroups(client, options, queue)
        }
        defer { rd_kafka_event_destroy(event) }
        var count = 0
        guard let result = rd_kafka_event_ListConsumerGroups_result(event),
            let listings = rd_kafka_ListConsumerGroups_result_valid(result, &count)
        else { return [] }
        return (0..<count).compactMap { i in
            listings[i].map { String(cString: rd_kafka_ConsumerGroupListing_group_id($0)) }
        }
    }

    /// One admin request about topics: submitted on a queue of its own, its
    /// answer awaited, each topic's result checked (`done`: an error that
    /// means the work is done already, as "already exists" for a create).
    private static func topicOperation(
        _ what: String, client: OpaquePointer, operation: rd_kafka_admin_op_t, timeoutMs: Int32,
        done: rd_kafka_resp_err_t,
        submit: (_ options: OpaquePointer?, _ queue: OpaquePointer) -> Void,
        results: (_ event: OpaquePointer, _ count: inout Int) -> UnsafeMutablePointer<OpaquePointer?>?
    ) throws(KafkaError) {
        let event = try adminRequest(what, client: client, operation: operation, timeoutMs: timeoutMs, submit: submit)
        defer { rd_kafka_event_destroy(event) }
        var count = 0
        guard let topics = results(event, &count) else { return }
        for i in 0..<count {
            let err = rd_kafka_topic_result_error(topics[i])
            if err != RD_KAFKA_RESP_ERR_NO_ERROR && err != done {
                throw KafkaError.admin("\(String(cString: rd_kafka_topic_result_name(topics[i]))): \(err.message)")
            }
        }
    }

    /// One admin request, submitted on a queue of its own: its answer (to be
    /// destroyed by the caller), or the request's error.
    private static func adminRequest(
        _ what: String, client: OpaquePointer, operation: rd_kafka_admin_op_t, timeoutMs: Int32,
        submit: (_ options: OpaquePointer?, _ queue: OpaquePointer) -> Void
    ) throws(KafkaError) -> OpaquePointer {
        var errstr = [CChar](repeating: 0, count: 512)
        let queue = rd_kafka_queue_new(client)!
        defer { rd_kafka_queue_destroy(queue) }
        let options = rd_kafka_AdminOptions_new(client, operation)
        defer { rd_kafka_AdminOptions_destroy(options) }
        _ = rd_kafka_AdminOptions_set_request_timeout(options, timeoutMs, &errstr, errstr.count)
        _ = rd_kafka_AdminOptions_set_operation_timeout(options, timeoutMs, &errstr, errstr.count)
        submit(options, queue)
        guard let event = rd_kafka_queue_poll(queue, timeoutMs + 1000) else {
            throw KafkaError.admin("\(what): no answer within \(timeoutMs) ms")
        }
        let eventError = rd_kafka_event_error(event)
        if eventError != RD_KAFKA_RESP_ERR_NO_ERROR {
            rd_kafka_event_destroy(event)
            throw KafkaError.admin("\(what): \(eventError.message)")
        }
        return event
    }

    /// The number of partitions a topic has now, from the broker's metadata.
    static func partitionCount(client: OpaquePointer, topic: String, timeoutMs: Int32) throws(KafkaError) -> Int {
        let (err, partitions) = try topicMetadata(client: client, topic: topic, timeoutMs: timeoutMs)
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError.admin("metadata for \(topic): \(err.message)") }
        return partitions
    }

    /// Which of the topics the broker has. Throws when the broker does not answer
    /// (so a caller never takes "unreachable" for "missing"); a topic it does not
    /// know is simply left out.
    static func existingTopics(client: OpaquePointer, _ names: [String], timeoutMs: Int32) throws(KafkaError) -> Set<
        String
    > {
        var existing: Set<String> = []
        for name in names {
            let (err, partitions) = try topicMetadata(client: client, topic: name, timeoutMs: timeoutMs)
            if err == RD_KAFKA_RESP_ERR_NO_ERROR, partitions > 0 { existing.insert(name) }
        }
        return existing
    }

    /// One topic's entry in the broker's metadata: its error (unknown topic, …)
    /// and partition count. Throws when the request itself fails.
    private static func topicMetadata(
        client: OpaquePointer, topic: String, timeoutMs: Int32
    ) throws(KafkaError) -> (rd_kafka_resp_err_t, Int) {
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
        return (t.err, Int(t.partition_cnt))
    }

    /// The names of every topic the broker's metadata holds now.
    static func topicNames(client: OpaquePointer, timeoutMs: Int32) throws(KafkaError) -> [String] {
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let err = rd_kafka_metadata(client, 1, nil, &metadata, timeoutMs)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            throw KafkaError.admin("metadata: \(err.message)")
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        return (0..<Int(metadata.pointee.topic_cnt)).map { String(cString: metadata.pointee.topics[$0].topic) }
    }
}
