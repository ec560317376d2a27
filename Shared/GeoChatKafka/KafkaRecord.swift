/// One record read from a topic.
public struct KafkaRecord: Sendable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var key: [UInt8]?
    public var value: [UInt8]
    /// The generation of a rotating topic it was read from (`TopicGenerations`);
    /// `topic` is then the logical name. Nil: the topic does not rotate.
    public var generation: Int64?
    /// The record's headers, in the order they were written (the trace context, if any).
    public var headers: [KafkaHeader]

    public init(
        topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8], generation: Int64? = nil,
        headers: [KafkaHeader] = []
    ) {
        self.generation = generation
        self.headers = headers
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
    }

    /// Key and value bytes, as the metrics count a record both ways.
    public var byteCount: Int { value.count + (key?.count ?? 0) }

    public var keyString: String? { key.map { String(decoding: $0, as: UTF8.self) } }

    /// The last header of that name as text (Kafka allows repeats; the last one written wins).
    public func header(_ name: String) -> String? { headers.last { $0.name == name }?.text }
}

/// One header of a Kafka record: a name and bytes. The only ones GeoChat
/// writes carry the W3C trace context (`traceparent`, `tracestate`) while
/// tracing is on; the JSON value stays the whole contract.
public struct KafkaHeader: Sendable, Equatable {
    public var name: String
    public var value: [UInt8]

    public init(name: String, value: [UInt8]) {
        self.name = name
        self.value = value
    }

    public init(_ name: String, _ text: String) {
        self.init(name: name, value: Array(text.utf8))
    }

    public var text: String { String(decoding: value, as: UTF8.self) }
}

/// One partition of one topic.
public struct PartitionID: Hashable, Sendable {
    public var topic: String
    public var partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }
}
