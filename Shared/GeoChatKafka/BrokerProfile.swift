/// The broker the services talk to. The one-machine stack runs Tansu, whose
/// ways need workarounds a Kafka cluster must not get (docs/architecture.md,
/// "Kafka settings").
public enum BrokerProfile: String, Sendable, CaseIterable {
    /// A Kafka cluster: long-poll fetches (a waiting fetch is answered as soon
    /// as data arrives), topics that outlive restarts.
    case kafka
    /// The dev broker: short fetch waits (it answers a waiting fetch only when
    /// the wait ends), topics kept in memory and made anew after a restart
    /// (consumers rewind, producers are replaced, topics re-created every 5 s).
    case tansu
}
