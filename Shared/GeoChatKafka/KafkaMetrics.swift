import GeoChatDomain
import GeoChatMetrics
import Metrics

/// The transport's metrics, labelled by topic. Each instance's private reply
/// topic counts as `geochat.replies`, so labels stay few however many instances come and go.
enum KafkaMetrics {
    static let produced = LabeledFamily(counter: MetricNames.kafkaProduced, label: "topic")
    static let produceErrors = LabeledFamily(counter: MetricNames.kafkaProduceErrors, label: "topic")
    static let consumed = LabeledFamily(counter: MetricNames.kafkaConsumed, label: "topic")
    static let lag = LabeledFamily(gauge: MetricNames.kafkaConsumerLag, label: "topic")

    static let replyPrefix = Topics.replies(instance: "")

    /// The label for a topic: its name, or `geochat.replies` for any reply topic.
    static func topicLabel(_ topic: String) -> String {
        topic.hasPrefix(replyPrefix) ? "geochat.replies" : topic
    }
}
