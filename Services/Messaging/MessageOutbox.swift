import GeoChatBus
import GeoChatDomain
import GeoChatKafka

/// The messaging store as an outbox: its entries are stored messages, in
/// lanes by room.
struct MessageOutbox: Outbox {
    let store: any MessageStore

    func announced(_ entries: [MessageRef]) async throws { try await store.announced(entries) }

    func relayUnannounced(
        olderThan grace: Duration, limit: Int, publish: @Sendable ([MessageStored]) async -> [MessageRef]
    ) async throws -> OutboxPass {
        try await store.relayUnannounced(olderThan: grace, limit: limit, publish: publish)
    }
}
