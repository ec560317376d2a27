import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Logging

/// Follows room events: a created room gets its log; a removed room loses its
/// messages and keeps a tombstone.
struct RoomLifecycleFeed: Sendable {
    let store: any MessageStore
    let consumer: KafkaConsumer
    let logger: Logger

    func run() async {
        for await record in consumer.records {
            guard let event = EventDecoding.decode(RoomEvent.self, from: record) else {
                consumer.markProcessed(record)
                continue
            }
            // Removal must not be lost: retry until PostgreSQL takes it (the record
            // stays uncommitted meanwhile, so a restart retries too).
            while !Task.isCancelled {
                do {
                    switch event {
                    case .created(let room): try await store.open(room.id)
                    case .removed(let room, let reason):
                        try await store.remove(room)
                        logger.info("room messages removed", metadata: ["room": "\(room)", "reason": "\(reason)"])
                    // Expiry batches: expiry itself has the messages removed with
                    // `removeRooms` and records that it did; repeating it here would
                    // double the work of a large run.
                    case .changed, .joined, .left, .removedRooms: break
                    }
                    consumer.markProcessed(record)
                    break
                } catch {
                    logger.warning("room event not applied yet", metadata: ["error": "\(String(reflecting: error))"])
                    try? await Task.sleep(for: .milliseconds(500))
                }
            }
        }
    }
}
