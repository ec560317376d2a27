import Synchronization

/// An outbox in memory, by the rules of `PostgresEventOutbox`: for the
/// in-memory stores of handler tests. `now` is the owning store's clock.
public final class InMemoryEventOutbox: Outbox {
    private struct Row {
        var event: StagedEvent
        var storedMs: Int64
    }

    private let rows = Mutex<(next: Int64, pending: [Row])>((1, []))
    private let now: @Sendable () -> Int64

    public init(now: @escaping @Sendable () -> Int64) { self.now = now }

    /// Stores the event (the caller holds the lock of the change it announces).
    public func stage(_ record: EncodedEvent) -> StagedEvent {
        let at = now()
        return rows.withLock { rows in
            let staged = StagedEvent(seq: rows.next, record: record)
            rows.next += 1
            rows.pending.append(Row(event: staged, storedMs: at))
            return staged
        }
    }

    /// Events not yet announced, oldest first (for tests).
    public var pending: [StagedEvent] { rows.withLock { $0.pending.map(\.event) } }

    public func announced(_ entries: [Int64]) async throws {
        let done = Set(entries)
        rows.withLock { $0.pending.removeAll { done.contains($0.event.seq) } }
    }

    public func relayUnannounced(
        olderThan grace: Duration, limit: Int, publish: @Sendable ([StagedEvent]) async -> [Int64]
    ) async throws -> OutboxPass {
        let cutoff = now() - grace.components.seconds * 1000 - grace.components.attoseconds / 1_000_000_000_000_000
        let due = rows.withLock { $0.pending.filter { $0.storedMs <= cutoff }.prefix(limit).map(\.event) }
        let published = due.isEmpty ? [] : await publish(due)
        try await announced(published)
        return .relayed(published: published.count, failed: due.count - published.count, backlog: pending.count)
    }
}
