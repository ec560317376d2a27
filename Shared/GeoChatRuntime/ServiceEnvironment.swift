import Foundation
import GeoChatDomain
import GeoChatKafka
import Logging

/// What every GeoChat executable reads at start: who it is, where Kafka and
/// PostgreSQL are, where its HTTP port is. Defaults run on one machine.
public struct ServiceEnvironment: Sendable {
    public let service: String
    public let instanceID: String
    public let configuration: Configuration
    public let logger: Logger
    public private(set) var kafka: KafkaSettings
    public let httpHost: String
    public let httpPort: Int

    /// Reads settings and sets up logging. `defaultPort` is the HTTP port
    /// (the gateway's public port, or another service's health/status port).
    public init(service: String, defaultPort: Int, configuration: Configuration = Configuration()) throws {
        self.service = service
        self.configuration = configuration
        let level = Logger.Level(rawValue: configuration.string("log.level", default: "info")) ?? .info
        LoggingSystem.bootstrap { LogfmtHandler(label: $0, level: level) }
        ServiceMetrics.bootstrap()
        self.instanceID = configuration.string("instance.id") ?? Self.generatedInstanceID(service)
        var logger = Logger(label: service)
        logger[metadataKey: "instance"] = "\(instanceID)"
        self.logger = logger
        self.kafka = KafkaSettings(
            brokers: configuration.string("kafka.brokers", default: "127.0.0.1:9092"),
            clientID: "geochat-\(instanceID)",
            partitions: try configuration.int("partitions", default: 8),
            replicationFactor: try configuration.int("kafka.replication.factor", default: 1),
            sessionTimeoutMs: try configuration.int("kafka.session.timeout.ms", default: 6000),
            fetchWaitMaxMs: try configuration.int("kafka.fetch.wait.max.ms", default: 10),
            backgroundFetchWaitMaxMs: try configuration.int("kafka.background.fetch.wait.max.ms", default: 100),
            lingerMs: try configuration.int("kafka.linger.ms", default: 1),
            messageTimeoutMs: try configuration.int("kafka.message.timeout.ms", default: 5000))
        // Every requester's reply topic counts as one label.
        let replyTopics = Topics.replies(instance: "")
        self.kafka.metricLabel = { $0.hasPrefix(replyTopics) ? "geochat.replies" : $0 }
        self.httpHost = configuration.string("http.host", default: "127.0.0.1")
        self.httpPort = try configuration.int("http.port", default: defaultPort)
    }

    /// Host, pid and a random suffix: unique per process, readable in logs and topic names.
    static func generatedInstanceID(_ service: String) -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        var generator = SystemRandomNumberGenerator()
        let suffix = String(generator.next(upperBound: UInt32(1 << 20)), radix: 36)
        let safeHost = host.filter { $0.isLetter || $0.isNumber || $0 == "-" }
        return "\(service)-\(safeHost)-\(ProcessInfo.processInfo.processIdentifier)-\(suffix)"
    }
}
