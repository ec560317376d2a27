/// One partition of one topic.
public struct PartitionID: Hashable, Sendable {
    public var topic: String
    public var partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }
}
