import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Logging

/// Follows room events: a created room gets its log; a removed room loses its
/// messages and keeps a tombstone. The rooms created in one poll's records get
/// their logs in one statement (one commit, not one a room).
struct RoomLifecycleFeed: Sendable {
    let store: any MessageStore
    let consumer: KafkaConsumer
    let logger: Logger

    func run() async {
        for await batch in consumer.batches {
            var created: [RoomID] = []
            for record in batch {
                switch EventDecoding.decode(RoomEvent.self, from: record) {
                case .created(let room): created.append(room.id)
                case .removed(let room, let reason):
                    // In the records' order: the rooms created before it first.
                    guard await untilApplied({ try await store.open(created) }) else { return }
                    created = []
                    guard await untilApplied({ try await store.remove(room) }) else { return }
                    logger.info("room messages removed", metadata: ["room": "\(room)", "reason": "\(reason)"])
                // Expiry batches: expiry itself has the messages removed with
                // `removeRooms` and records that it did; repeating it here would
                // double the work of a large run.
                case .changed, .joined, .left, .removedRooms, nil: break
                }
            }
            guard await untilApplied({ try await store.open(created) }) else { return }
            for record in batch { consumer.markProcessed(record) }
        }
    }

    /// Removal must not be lost: retried until PostgreSQL takes it (the records
    /// stay unprocessed meanwhile, so a restart retries too); false once the
    /// feed is cancelled first.
    private func untilApplied(_ body: () async throws -> Void) async -> Bool {
        while !Task.isCancelled {
            do {
                try await body()
                return true
            } catch {
                logger.warning("room event not applied yet", metadata: ["error": "\(String(reflecting: error))"])
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        return false
    }
}
