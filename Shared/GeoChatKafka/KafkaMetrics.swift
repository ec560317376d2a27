import GeoChatMetrics
import Metrics

/// The transport's metrics, labelled by topic (`KafkaSettings.metricLabel`).
enum KafkaMetrics {
    static let produced = LabeledFamily(counter: MetricNames.kafkaProduced, label: "topic")
    /// Key and value bytes of the records the broker acknowledged (the cost model counts them per phone).
    static let producedBytes = LabeledFamily(counter: MetricNames.kafkaProducedBytes, label: "topic")
    static let produceErrors = LabeledFamily(counter: MetricNames.kafkaProduceErrors, label: "topic")
    static let consumed = LabeledFamily(counter: MetricNames.kafkaConsumed, label: "topic")
    /// Key and value bytes of the records read, as `producedBytes` counts them: what one more
    /// phone or one more gateway adds to an instance's reads (the cost run over cluster sizes).
    static let consumedBytes = LabeledFamily(counter: MetricNames.kafkaConsumedBytes, label: "topic")
    static let lag = LabeledFamily(gauge: MetricNames.kafkaConsumerLag, label: "topic")
    /// Old topic generations this instance deleted (*tansu*, `TopicProvisioner.pruneGenerations`).
    static let generationsDeleted = Counter(label: MetricNames.kafkaGenerationsDeleted)
    /// The consumer groups of old generations this instance deleted (*tansu*, `TopicProvisioner.pruneGenerations`).
    static let generationGroupsDeleted = Counter(label: MetricNames.kafkaGenerationGroupsDeleted)
}
