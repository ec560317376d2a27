/// What start-up does about the shared topics.
public enum TopicsMode: String, Sendable, CaseIterable {
    /// Creates those missing, with the specs in code (`TopicSpec`).
    case create
    /// Only checks that they exist with enough partitions (topics managed by
    /// the operator, e.g. Strimzi `KafkaTopic`; no create rights needed).
    case verify
}
