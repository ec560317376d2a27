import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Logging

/// Keeps memberships and visit times current from other services' events:
/// a `say` joins its author and visits the room; a renamed session renames its
/// memberships; an ended session leaves every room.
struct RoomActivityFeed: Sendable {
    static let topics = [Topics.messageEvents, Topics.sessionEvents]

    let store: any RoomStore
    let consumer: KafkaConsumer
    let logger: Logger

    func run() async {
        for await record in consumer.records {
            await apply(record)
            consumer.markProcessed(record)
        }
    }

    private func apply(_ record: KafkaRecord) async {
        // Retry a few times while PostgreSQL is away, then move on: these are
        // conveniences (participant lists, visit times), not acknowledged data.
        for attempt in 1...20 {
            do {
                switch record.topic {
                case Topics.messageEvents:
                    guard let stored = EventDecoding.decode(MessageStored.self, from: record)
                    else { return }
                    if let author = stored.author {
                        _ = try await store.join(
                            stored.message.room, session: author, nick: stored.message.nick, nickVersion: nil,
                            announce: false)
                    } else {
                        try await store.visit(stored.message.room)
                    }
                case Topics.sessionEvents:
                    switch EventDecoding.decode(SessionEvent.self, from: record) {
                    case .renamed(let session):
                        try await store.renameMember(session.id, nick: session.nick, version: session.version)
                    case .ended(let session, _): try await store.removeMemberships(of: session.id)
                    case .started, nil: break
                    }
                default: break
                }
                return
            } catch {
                if attempt == 1 {
                    logger.warning("activity event not applied yet", metadata: ["topic": "\(record.topic)", "error": "\(String(reflecting: error))"])
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        logger.error("activity event dropped after retries", metadata: ["topic": "\(record.topic)", "offset": "\(record.offset)"])
    }
}
