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
    static let requestDuration = LabeledFamily(timer: MetricNames.requestDuration, label: "topic")
    static let requestTimeouts = LabeledFamily(counter: MetricNames.requestTimeouts, label: "topic")
    static let commandsHandled = LabeledFamily(counter: MetricNames.commandsHandled, label: "command")
    static let commandErrors = LabeledFamily(counter: MetricNames.commandErrors, label: "command")
    static let commandDuration = LabeledFamily(timer: MetricNames.commandDuration, label: "command")
    static let commandsDropped = LabeledFamily(counter: MetricNames.commandsDropped, label: "reason")

    static let replyPrefix = Topics.replies(instance: "")

    /// The label for a topic: its name, or `geochat.replies` for any reply topic.
    static func topicLabel(_ topic: String) -> String {
        topic.hasPrefix(replyPrefix) ? "geochat.replies" : topic
    }

    /// The case name of a command enum (`say`, `region`, …): a bounded label.
    static func commandLabel<Command>(_ command: Command) -> String { MetricLabels.caseName(of: command) }
}
