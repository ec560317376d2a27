import Logging

/// Creates the topics a service needs at start, idempotently: several instances
/// may start at once, and a broker that lost its topics gets them back.
public struct TopicProvisioner: Sendable {
    let producer: KafkaProducer
    let settings: KafkaSettings
    let logger: Logger

    public init(producer: KafkaProducer, settings: KafkaSettings, logger: Logger) {
        self.producer = producer
        self.settings = settings
        self.logger = logger
    }

    /// One attempt; throws when the broker does not answer in time.
    public func ensure(_ topics: [String], partitions: Int? = nil) throws {
        let count = partitions ?? settings.partitions
        try producer.administer { client in
            try client.createTopics(topics.map { ($0, count) }, replicationFactor: settings.replicationFactor, timeoutMs: 5000)
        }
    }

    /// Tries until it succeeds or the task is cancelled (the broker may start after us).
    public func ensureRetrying(_ topics: [String], partitions: Int? = nil) async throws {
        var attempt = 0
        while true {
            do {
                try await offloaded { [self] in try ensure(topics, partitions: partitions) }
                return
            } catch {
                attempt += 1
                if attempt == 1 || attempt % 10 == 0 {
                    logger.warning("topics not ready yet, retrying", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: .milliseconds(min(2000, 100 * attempt)))
            }
        }
    }

    /// Checks every few seconds that the topics still exist: a broker that keeps
    /// topics in memory forgets them when it restarts, and producers do not
    /// auto-create (they would pick the broker's partition count, not ours).
    public func keep(_ topics: [String], partitions: Int? = nil, every interval: Duration = .seconds(5)) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            do {
                try await offloaded { [self] in try ensure(topics, partitions: partitions) }
            } catch {
                logger.debug("topic check failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// How many records the topic holds now (the sum of its high watermarks).
    /// A broker that keeps topics in memory and restarted answers fewer than before.
    public func recordCount(_ topic: String) async throws -> Int64 {
        try await offloaded { [producer] in
            try producer.administer { try $0.highWatermarks(topic, timeoutMs: 5000).values.reduce(0, +) }
        }
    }

    /// The topic's partitions as the broker's metadata has them now.
    public func partitionCount(_ topic: String) async throws -> Int {
        try await offloaded { [producer] in try producer.administer { try $0.partitionCount(topic, timeoutMs: 5000) } }
    }
}
