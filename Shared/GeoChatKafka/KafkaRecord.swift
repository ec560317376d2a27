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
