import GeoChatKafka

/// The outcome of one relay pass.
public enum OutboxPass: Equatable, Sendable {
    /// Another instance is relaying.
    case notLeader
    /// `published` events went out, `failed` are kept for the next pass;
    /// `backlog` rows were left in the outbox after the pass (young ones included).
    case relayed(published: Int, failed: Int, backlog: Int)
}
