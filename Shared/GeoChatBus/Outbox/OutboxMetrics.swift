import GeoChatKafka
import GeoChatMetrics
import Logging
import Metrics
import Synchronization

/// Label `by`: `handler` (published right after the commit) or `relay`.
enum OutboxMetrics {
    static let published = LabeledFamily(counter: MetricNames.outboxPublished, label: "by")
    static let failures = LabeledFamily(counter: MetricNames.outboxPublishFailures, label: "by")
    static let backlog = Gauge(label: MetricNames.outboxBacklog)
}
