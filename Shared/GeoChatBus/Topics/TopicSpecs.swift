import GeoChatDomain
import GeoChatKafka

/// How GeoChat's topics are created: one rule per kind of topic
/// (`Topics.kind(of:)`), the values in docs/operations.md ("Production").
public enum TopicSpecs {
    /// Commands, replies, presence: an hour covers any consumer that is merely
    /// restarting; a command older than its deadline is dropped anyway.
    public static let transientRetentionMs: Int64 = 3_600_000
    /// Events: a week, so a consumer group that was away for days catches up.
    public static let eventRetentionMs: Int64 = 7 * 86_400_000

    public static func spec(for topic: String, partitions: Int? = nil) -> TopicSpec {
        switch Topics.kind(of: topic) {
        case .transient:
            TopicSpec(name: topic, partitions: partitions, retention: .time(milliseconds: transientRetentionMs))
        case .events: TopicSpec(name: topic, partitions: partitions, retention: .time(milliseconds: eventRetentionMs))
        case .state: TopicSpec(name: topic, partitions: partitions, retention: .compacted)
        }
    }

    /// The shared topics every service needs.
    public static var shared: [TopicSpec] { Topics.shared.map { spec(for: $0) } }
}
