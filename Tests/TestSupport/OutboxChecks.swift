import GeoChatBus
import Synchronization

/// Outboxes seen from tests: what a relay pass would publish.
public enum OutboxChecks {
    /// One relay pass with no grace whose broker takes everything: the events
    /// it was handed, in order. They leave the outbox.
    public static func relayAll(_ outbox: any Outbox<StagedEvent>) async throws -> [StagedEvent] {
        let taken = Mutex<[StagedEvent]>([])
        _ = try await outbox.relayUnannounced(olderThan: .zero, limit: 1000) { due in
            taken.withLock { $0 += due }
            return due.map(\.seq)
        }
        return taken.withLock { $0 }
    }
}
