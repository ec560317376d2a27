/// The broker the services talk to. The one-machine stack runs Tansu, whose
/// ways need workarounds a Kafka cluster must not get. Everything that differs
/// between the two profiles is decided here, each with why
/// (docs/architecture.md, "Kafka settings"); code asks the profile, never
/// compares it.
public enum BrokerProfile: String, Sendable, CaseIterable {
    /// A Kafka cluster: long-poll fetches (a waiting fetch is answered as soon
    /// as data arrives), topics that outlive restarts and trim themselves.
    case kafka
    /// The dev broker, Tansu 0.6 with memory storage: it answers an empty
    /// fetch only when the wait ends and one that a record reaches up to half
    /// the wait late, spends CPU on every fetch, forgets everything when it
    /// restarts, and never trims a topic.
    case tansu

    // MARK: Fetch waits

    /// Consumers on a request's path (command topics, the gateways' event
    /// feed). Kafka: the wait costs no latency and bounds only how soon
    /// partitions a rebalance hands over are first fetched. Tansu: an empty
    /// fetch passes over its partitions at 0, ½, ¾, … of its wait, a record
    /// found ends it, so a hop takes up to about half the wait (measured: p99
    /// 7, 11, 21 ms at 10, 20, 40 ms), and every fetch costs the broker ~0.4 ms
    /// whatever its wait (docs/benchmarks.md, "The dev broker's costs"): 30 ms
    /// keeps a hop under ~17 ms at ~0.013 cores a consumer idle.
    public var interactiveFetchWaitMs: Int { self == .tansu ? 30 : 2000 }

    /// A requester's reply readers, which rest while no request waits (no idle
    /// cost). Under load a fetch that finds records costs Tansu ~1.1 ms plus
    /// ~0.5 µs for every batch the partition holds, and a reader fetches about
    /// twice per wait: at 10 ms a gateway's reply reader alone made ~200 such
    /// fetches a second at 200 says/s (answer p99 253 ms against 190 ms at 30,
    /// docs/benchmarks.md, "Writes", 2026-11-27 10:55 and 11:01).
    public var replyFetchWaitMs: Int { self == .tansu ? 30 : 2000 }

    /// Consumers off every request's path (state topics, bookkeeping feeds,
    /// admin and expiry commands). On Tansu 250 ms: a record within ~130 ms,
    /// ~0.002 cores a consumer idle.
    public var backgroundFetchWaitMs: Int { self == .tansu ? 250 : 5000 }

    /// Consumers without a group, whose partitions never move: on Kafka only
    /// idle cost depends on their wait. Nil: the pace's wait (on Tansu the
    /// wait is the latency).
    public var groupLessFetchWaitMs: Int? { self == .kafka ? 10_000 : nil }

    // MARK: Producers

    /// Tansu 0.6 rewrites its whole metadata document (every topic, every
    /// producer's sequence for every partition it ever wrote) on each
    /// idempotent produce, so each say got slower as topics came and went.
    /// Without idempotence a retry may store a record twice; every consumer is
    /// idempotent already.
    public var idempotentProducer: Bool { self == .kafka }

    /// Without idempotence, one request in flight is what keeps a partition's
    /// records in order through a retry (Tansu serves one request a connection
    /// at a time anyway).
    public var maxInFlightRequests: Int { idempotentProducer ? 5 : 1 }

    /// Tansu forgets producer ids when it restarts and answers
    /// `UNKNOWN_PRODUCER_ID` forever to the old producer; a Kafka cluster does
    /// not, and a producer that saw every broker go is still good there.
    public var replacesProducerAfterOutage: Bool { self == .tansu }

    // MARK: Topics

    /// Tansu forgets topics when it restarts: the shared topics are checked
    /// and re-created every few seconds. A cluster's are made once at start.
    public var recreatesLostTopics: Bool { self == .tansu }

    /// A reader without a group seeks back to the start of a partition whose
    /// high watermark fell below its position (the broker made the topic anew);
    /// a durable cluster never does that, and the check would cost a watermark
    /// query a second.
    public var followsRecreatedTopics: Bool { self == .tansu }

    /// The state topics' records lost with the broker are published again.
    public var republishesLostState: Bool { self == .tansu }

    /// Tansu keeps every batch ever produced and lists them all on each fetch
    /// that returns records: a requester's reply topic is replaced after this
    /// many replies (0: never; Kafka trims by retention).
    public var replyTopicRecords: Int { self == .tansu ? 2000 : 0 }

    /// Tansu: the busy shared topics are written in generations of this many
    /// seconds, so no partition grows for long (0: no generations).
    public var topicGenerationSeconds: Int { self == .tansu ? 60 : 0 }

    // MARK: Groups

    /// Heartbeats per session timeout. Kafka's advice is at most a third of it;
    /// the dev broker's stack heartbeats twice as often, so a rebalance there
    /// reaches every member sooner (tests scale instances up and down).
    public var heartbeatsPerSessionTimeout: Int { self == .tansu ? 6 : 3 }
}
