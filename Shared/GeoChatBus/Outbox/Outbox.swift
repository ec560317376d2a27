import GeoChatKafka

/// A transactional outbox: a state change and the event that announces it
/// commit together in PostgreSQL; `OutboxRelay` gets the event to the broker
/// (docs/architecture.md, "The outbox"). Each service's store is one.
public protocol Outbox<Entry>: Sendable {
    associatedtype Entry: OutboxEntry

    /// The broker acknowledged these entries' events: their rows go.
    func announced(_ entries: [Entry.Ref]) async throws
    /// One relay pass, run by at most one instance at a time cluster-wide (others
    /// get `.notLeader`): entries stored longer than `grace` ago, at most `limit`,
    /// in the order they were stored, go to `publish`, which answers those the
    /// broker acknowledged; their rows are then removed (and those whose subject
    /// is gone meanwhile).
    func relayUnannounced(
        olderThan grace: Duration, limit: Int, publish: @Sendable ([Entry]) async -> [Entry.Ref]
    ) async throws -> OutboxPass
}
