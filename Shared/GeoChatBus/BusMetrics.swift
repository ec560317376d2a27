import GeoChatMetrics
import Metrics

/// Request/reply metrics: requests by the topic they went to, commands by name.
enum BusMetrics {
    static let requestDuration = LabeledFamily(timer: MetricNames.requestDuration, label: "topic")
    static let requestTimeouts = LabeledFamily(counter: MetricNames.requestTimeouts, label: "topic")
    static let commandsHandled = LabeledFamily(counter: MetricNames.commandsHandled, label: "command")
    static let commandErrors = LabeledFamily(counter: MetricNames.commandErrors, label: "command")
    static let commandDuration = LabeledFamily(timer: MetricNames.commandDuration, label: "command")
    static let commandsDropped = LabeledFamily(counter: MetricNames.commandsDropped, label: "reason")
    static let commandWait = LabeledFamily(timer: MetricNames.commandWait, label: "command")
    static let replyTravel = Timer(label: MetricNames.replyTravel)
}
