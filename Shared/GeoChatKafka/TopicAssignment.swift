/// A topic and the partitions a consumer holds of it.
public struct TopicAssignment: Sendable, Equatable, Codable {
    public var topic: String
    public var partitions: [Int32]
}
