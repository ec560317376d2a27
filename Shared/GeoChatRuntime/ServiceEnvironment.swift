import Foundation
import GeoChatDomain
import GeoChatKafka
import Logging

/// What every GeoChat executable reads at start: who it is, where Kafka and
/// PostgreSQL are, where its HTTP port is. Defaults run on one machine.
public struct ServiceEnvironment: Sendable {
    public let service: String
    public let instanceID: String
    /// No `instance.id` was given: the id is this process's alone (host, pid,
    /// random), so what is named after it (its reply topic) goes with it.
    public let instanceIDIsGenerated: Bool
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
        let configuredID = configuration.string("instance.id")
        self.instanceID = configuredID ?? Self.generatedInstanceID(service)
        self.instanceIDIsGenerated = configuredID == nil
        var logger = Logger(label: service)
        logger[metadataKey: "instance"] = "\(instanceID)"
        self.logger = logger
        do {
            self.kafka = try Self.kafkaSettings(configuration, clientID: "geochat-\(instanceID)")
            try kafka.validate()
        } catch {
            // A clear line and a non-zero exit, not a crash: the operator's
            // configuration is wrong, and restarting will not mend it.
            logger.critical("configuration refused; not starting", metadata: ["error": "\(error)"])
            Self.exitForBadConfiguration()
        }
        // Every requester's reply topic counts as one label.
        let replyTopics = Topics.replies(instance: "")
        self.kafka.metricLabel = { $0.hasPrefix(replyTopics) ? "geochat.replies" : $0 }
        self.httpHost = configuration.string("http.host", default: "127.0.0.1")
        self.httpPort = try configuration.int("http.port", default: defaultPort)
    }

    /// The key gateways and session services seal admin passwords with
    /// (`LoginSeal`): `login.seal.key` (32 bytes, base64) or the file named by
    /// `login.seal.key.file`. Missing or malformed: a critical line naming the
    /// setting (never its value) and exit status 2.
    public func loginSeal() -> LoginSeal {
        key("login.seal.key", heldBy: "every gateway with the admin API and session service", LoginSeal.init(base64:))
    }

    /// The key operators' commands are sealed with (`OperatorSeal`): the admin
    /// gateway and expiry seal, rooms and messaging check. `operator.key`
    /// (32 bytes, base64) or the file named by `operator.key.file`; missing or
    /// malformed: exit status 2, as for the login seal key.
    public func operatorSeal() -> OperatorSeal {
        key(
            "operator.key", heldBy: "every gateway with the admin API, expiry, rooms and messaging service",
            OperatorSeal.init(base64:))
    }

    /// A 32-byte base64 key from `<name>` or the file `<name>.file` names. Missing or
    /// malformed: a critical line naming the setting (never its value) and exit status 2.
    private func key<Key>(_ name: String, heldBy holders: String, _ make: (String) -> Key?) -> Key {
        let variable = "GEOCHAT_" + name.uppercased().replacingOccurrences(of: ".", with: "_")
        var text = configuration.string(name)
        var source = variable
        if text == nil, let path = configuration.string(name + ".file") {
            source = "\(variable)_FILE (\(path))"
            text = FileManager.default.contents(atPath: path).flatMap { String(data: $0, encoding: .utf8) } ?? ""
        }
        guard let text else {
            logger.critical(
                "configuration refused; not starting",
                metadata: [
                    "error":
                        "\(variable) or \(variable)_FILE must be set: 32 random bytes, base64 (openssl rand -base64 32), the same on \(holders)"
                ])
            Self.exitForBadConfiguration()
        }
        guard let key = make(text) else {
            logger.critical(
                "configuration refused; not starting",
                metadata: ["error": "\(source) is not 32 bytes in base64 (openssl rand -base64 32)"])
            Self.exitForBadConfiguration()
        }
        return key
    }

    /// Kafka as configured: `kafka.profile` (`kafka`, the default, or `tansu`,
    /// the dev broker), `kafka.topics` (`create` or `verify`), the latency
    /// knobs with the profile's defaults, and librdkafka properties from
    /// `kafka.properties.file` then `GEOCHAT_RDKAFKA_*` (these win).
    static func kafkaSettings(_ configuration: Configuration, clientID: String) throws -> KafkaSettings {
        let profileName = configuration.string("kafka.profile", default: BrokerProfile.kafka.rawValue)
        guard let profile = BrokerProfile(rawValue: profileName) else {
            throw ConfigurationError(
                key: "kafka.profile", value: profileName,
                expected: BrokerProfile.allCases.map(\.rawValue).joined(separator: " or "))
        }
        let modeName = configuration.string("kafka.topics", default: TopicsMode.create.rawValue)
        guard let topicsMode = TopicsMode(rawValue: modeName) else {
            throw ConfigurationError(
                key: "kafka.topics", value: modeName,
                expected: TopicsMode.allCases.map(\.rawValue).joined(separator: " or "))
        }
        var overrides: [String: String] = [:]
        if let file = configuration.string("kafka.properties.file") {
            overrides = try Configuration.propertiesFile(at: file)
        }
        overrides.merge(configuration.dottedProperties(prefix: "rdkafka")) { _, fromEnvironment in fromEnvironment }
        var settings = KafkaSettings(
            brokers: configuration.string("kafka.brokers", default: "127.0.0.1:9092"),
            clientID: clientID,
            partitions: try configuration.int("partitions", default: 8),
            replicationFactor: try configuration.int("kafka.replication.factor", default: 1),
            sessionTimeoutMs: try configuration.int("kafka.session.timeout.ms", default: 6000),
            fetchWaitMaxMs: try configuration.int("kafka.fetch.wait.max.ms", default: profile.interactiveFetchWaitMs),
            replyFetchWaitMaxMs: try configuration.int(
                "kafka.reply.fetch.wait.max.ms", default: profile.replyFetchWaitMs),
            backgroundFetchWaitMaxMs: try configuration.int(
                "kafka.background.fetch.wait.max.ms", default: profile.backgroundFetchWaitMs),
            lingerMs: try configuration.int("kafka.linger.ms", default: 1),
            messageTimeoutMs: try configuration.int("kafka.message.timeout.ms", default: 5000),
            overrides: overrides)
        settings.profile = profile
        settings.topicsMode = topicsMode
        settings.replyReaderQuiet = .milliseconds(try configuration.int("kafka.reply.reader.quiet.ms", default: 2000))
        let replyTopicRecords = try configuration.int(
            "kafka.reply.topic.records", default: profile.replyTopicRecords)
        settings.replyTopicRecords = replyTopicRecords > 0 ? replyTopicRecords : nil
        let generationSeconds = try configuration.int(
            "kafka.topic.generation.seconds", default: profile.topicGenerationSeconds)
        if generationSeconds > 0 {
            settings.generations = TopicGenerations(periodMs: Int64(generationSeconds) * 1000, rotates: Topics.rotates)
        }
        if let groupLessWait = profile.groupLessFetchWaitMs {
            settings.groupLessFetchWaitMaxMs = try configuration.int(
                "kafka.groupless.fetch.wait.max.ms", default: groupLessWait)
        }
        if configuration.string("kafka.min.insync.replicas") != nil {
            settings.minInsyncReplicas = try configuration.int("kafka.min.insync.replicas", default: 1)
        }
        return settings
    }

    /// Exit status 2: the configuration was refused (documented in docs/operations.md).
    static func exitForBadConfiguration() -> Never { exit(2) }

    /// A service's own settings read from the configuration; a value it refuses
    /// stops the start as every configuration error does: a critical line
    /// naming it, and exit status 2.
    public func settings<Settings>(_ read: (Configuration) throws -> Settings) -> Settings {
        do {
            return try read(configuration)
        } catch {
            logger.critical("configuration refused; not starting", metadata: ["error": "\(error)"])
            Self.exitForBadConfiguration()
        }
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
