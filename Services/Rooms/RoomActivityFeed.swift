import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Logging

/// Keeps memberships and visit times current from other services' events:
/// a stored message joins its author and visits the room; a renamed session
/// renames its memberships; an ended session leaves every room.
///
/// A say's author is made a member before the say is answered (`JoinBySaying`,
/// posted by the gateway beside the say); the message event makes it again here, so
/// a say whose answer was lost, or whose post failed, still joins. The two race
/// (the event often arrives first), and whichever makes the membership
/// announces it: the `joined` event is what tells push subscribers to read
/// the room's participants again. The message events of one poll go in one
/// statement, and a room's visit is written at most once a minute
/// (`RoomRules.visitResolution`): a busy room costs the rooms service one
/// statement a poll, not one commit a message.
struct RoomActivityFeed: Sendable {
    static let topics = [Topics.messageEvents, Topics.sessionEvents]

    let store: any RoomStore
    let outbox: OutboxRelay<StagedEvent>
    let logger: Logger

    func run(_ consumer: KafkaConsumer) async {
        for await batch in consumer.batches {
            await apply(batch)
            for record in batch { consumer.markProcessed(record) }
        }
    }

    /// One poll's records, in order.
    func apply(_ batch: [KafkaRecord]) async {
        var sayers: [Sayer] = []
        for record in batch {
            if record.topic == Topics.messageEvents {
                if let stored = EventDecoding.decode(MessageStored.self, from: record) {
                    sayers.append(Sayer(room: stored.message.room, session: stored.author, nick: stored.message.nick))
                }
                continue
            }
            // Session events apply in their place among the messages.
            await join(sayers)
            sayers = []
            await retrying(record) { try await apply(record) }
        }
        await join(sayers)
    }

    private func join(_ sayers: [Sayer]) async {
        guard !sayers.isEmpty else { return }
        await retrying(nil) {
            for event in try await store.sayersJoined(sayers) { outbox.announce(event) }
        }
    }

    private func apply(_ record: KafkaRecord) async throws {
        guard record.topic == Topics.sessionEvents else { return }
        switch EventDecoding.decode(SessionEvent.self, from: record) {
        case .renamed(let session):
            try await store.renameMember(session.id, nick: session.nick, version: session.version)
        case .ended(let session, _): try await store.removeMemberships(of: session.id)
        case .started, nil: break
        }
    }

    /// Retries a few times while PostgreSQL is away, then moves on: these are
    /// conveniences (participant lists, visit times), not acknowledged data.
    private func retrying(_ record: KafkaRecord?, _ body: () async throws -> Void) async {
        for attempt in 1...20 {
            do {
                try await body()
                return
            } catch {
                if attempt == 1 {
                    logger.warning(
                        "activity events not applied yet",
                        metadata: [
                            "topic": "\(record?.topic ?? Topics.messageEvents)",
                            "error": "\(String(reflecting: error))",
                        ])
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        logger.error(
            "activity events dropped after retries",
            metadata: [
                "topic": "\(record?.topic ?? Topics.messageEvents)",
                "offset": "\(record.map { String($0.offset) } ?? "-")",
            ])
    }
}
