/// How the services talk to Kafka. Defaults are tuned for low latency on one
/// machine (see docs/architecture.md, "Kafka settings"); every value can be
/// overridden through configuration.
public struct KafkaSettings: Sendable {
    public var brokers: String
    public var profile: BrokerProfile = .kafka
    public var topicsMode: TopicsMode = .create
    /// `min.insync.replicas` of the topics this instance creates (nil: the broker's default).
    public var minInsyncReplicas: Int?
    public var clientID: String
    /// Partitions of the shared topics when this instance creates them.
    public var partitions: Int
    public var replicationFactor: Int
    /// Group membership timeout. Tansu hands out the first assignment after
    /// about half of it, so one machine and tests run it low.
    public var sessionTimeoutMs: Int
    /// The broker holds a fetch at most this long: the main latency knob, for
    /// consumers on a request's path (commands, replies, the gateways' event feed).
    public var fetchWaitMaxMs: Int
    /// The same for a requester's reply readers, which rest while no request
    /// waits: the reply's hop, at no idle cost.
    public var replyFetchWaitMaxMs: Int
    /// The same for background consumers (state topics, bookkeeping events, admin
    /// commands). A broker that answers an empty fetch only when its wait ends
    /// (Tansu) spends CPU on every fetch, so these ask ten times less often.
    public var backgroundFetchWaitMaxMs: Int
    /// Consumers without a group (the gateways' feeds, reply topics, state
    /// replays) on a broker that answers a waiting fetch as soon as a record
    /// arrives: their partitions never move, so nothing but idle cost depends
    /// on the wait. Nil: the pace's wait (the `tansu` profile).
    public var groupLessFetchWaitMaxMs: Int?
    /// The producer waits this long to batch records.
    public var lingerMs: Int
    /// A requester moves to a new reply topic after this many replies and
    /// deletes the old one once drained (nil: never). Tansu cannot trim a topic
    /// and lists every stored batch of a partition on each fetch that returns
    /// records, so a reply topic that only grows slows every reply down.
    public var replyTopicRecords: Int?
    /// A requester's reply readers stop fetching after this long without a
    /// request waiting, and start again before the next is sent (zero: never
    /// rest). Tansu costs CPU for every fetch, answered or not.
    public var replyReaderQuiet: Duration = .seconds(2)
    /// *tansu*: the shared topics that rotate, and how often (nil: none rotates).
    public var generations: TopicGenerations?
    /// A record not acknowledged by then fails (the broker is away).
    public var messageTimeoutMs: Int
    /// Extra librdkafka properties (an operator's: security, SASL, TLS, …), applied last.
    public var overrides: [String: String]
    /// A topic's `topic` label in metrics. Topics made per instance (a requester's
    /// reply topic) should map to one label, so labels stay few however many
    /// instances come and go.
    public var metricLabel: @Sendable (String) -> String = { $0 }

    public init(
        brokers: String = "127.0.0.1:9092", clientID: String = "geochat", partitions: Int = 8,
        replicationFactor: Int = 1, sessionTimeoutMs: Int = 6000, fetchWaitMaxMs: Int = 10,
        replyFetchWaitMaxMs: Int = 10, backgroundFetchWaitMaxMs: Int = 100, lingerMs: Int = 1,
        messageTimeoutMs: Int = 5000,
        overrides: [String: String] = [:]
    ) {
        self.brokers = brokers
        self.clientID = clientID
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.sessionTimeoutMs = sessionTimeoutMs
        self.fetchWaitMaxMs = fetchWaitMaxMs
        self.replyFetchWaitMaxMs = replyFetchWaitMaxMs
        self.backgroundFetchWaitMaxMs = backgroundFetchWaitMaxMs
        self.lingerMs = lingerMs
        self.messageTimeoutMs = messageTimeoutMs
        self.overrides = overrides
    }

    var common: [String: String] {
        [
            "bootstrap.servers": brokers,
            "client.id": clientID,
            "log.connection.close": "false",
            // Come back quickly when the broker does.
            "reconnect.backoff.ms": "50",
            "reconnect.backoff.max.ms": "1000",
            "topic.metadata.refresh.interval.ms": "5000",
            "socket.keepalive.enable": "true",
        ]
    }

    var producerProperties: [String: String] {
        common.merging([
            "enable.idempotence": String(profile.idempotentProducer),
            "max.in.flight.requests.per.connection": String(profile.maxInFlightRequests),
            "acks": "all",
            "linger.ms": String(lingerMs),
            "message.timeout.ms": String(messageTimeoutMs),
            "retry.backoff.ms": "50",
            // Topics are made by TopicProvisioner with our partition count, never by accident.
            "allow.auto.create.topics": "false",
        ]) { $1 }.merging(overrides) { $1 }
    }

    /// A short-lived client for topic administration (no idempotence: it sends no records).
    var adminProperties: [String: String] {
        common.merging(["allow.auto.create.topics": "false"]) { $1 }.merging(overrides) { $1 }
    }

    /// Checks every property librdkafka would be given, producer's and
    /// consumer's, without connecting: a refused one is named in the error.
    public func validate() throws(KafkaError) {
        try RDKafkaConfig.check(producerProperties)
        try RDKafkaConfig.check(
            consumerProperties(
                group: "geochat-validate", commits: false, reset: "earliest", fetchWaitMaxMs: fetchWaitMaxMs))
    }

    func consumerProperties(group: String, commits: Bool, reset: String, fetchWaitMaxMs: Int) -> [String: String] {
        common.merging([
            "group.id": group,
            "enable.auto.commit": commits ? "true" : "false",
            // Offsets are stored only after a record was processed (at-least-once).
            "enable.auto.offset.store": "false",
            "auto.commit.interval.ms": "500",
            "auto.offset.reset": reset,
            "session.timeout.ms": String(sessionTimeoutMs),
            "heartbeat.interval.ms": String(max(100, sessionTimeoutMs / profile.heartbeatsPerSessionTimeout)),
            "fetch.wait.max.ms": String(fetchWaitMaxMs),
            "fetch.error.backoff.ms": "50",
            "partition.assignment.strategy": "cooperative-sticky",
            "allow.auto.create.topics": "false",
        ]) { $1 }.merging(overrides) { $1 }
    }
}
