import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Logging

/// Keeps memberships current from the session events: a renamed session
/// renames its memberships, an ended session leaves every room.
///
/// A say's author is made a member, and the room visited, by the
/// `JoinBySaying` the gateway posts beside the say (one path: the message
/// events are not read here; until 2026-11-27 this feed joined each say's
/// author again from them, racing that command, and read every message the
/// stack stored). The group keeps its name (`geochat-rooms-activity`), and so
/// its committed offsets.
struct SessionMembershipFeed: Sendable {
    static let topics = [Topics.sessionEvents]

    let store: any RoomStore
    let logger: Logger

    func run(_ consumer: KafkaConsumer) async {
        for await batch in consumer.batches {
            for record in batch { await retrying(record) { try await apply(record) } }
            for record in batch { consumer.markProcessed(record) }
        }
    }

    func apply(_ record: KafkaRecord) async throws {
        guard record.topic == Topics.sessionEvents else { return }
        switch EventDecoding.decode(SessionEvent.self, from: record) {
        case .renamed(let session):
            try await store.renameMember(session.id, nick: session.nick, version: session.version)
        case .ended(let session, _): try await store.removeMemberships(of: session.id)
        case .started, nil: break
        }
    }

    /// Retries a few times while PostgreSQL is away, then moves on: the
    /// gateway renames and ends memberships itself before it answers
    /// (`renameMemberships`, `endMemberships`); this feed covers changes no
    /// gateway followed (idle expiry, a gateway that died before it).
    private func retrying(_ record: KafkaRecord, _ body: () async throws -> Void) async {
        for attempt in 1...20 {
            do {
                try await body()
                return
            } catch {
                if attempt == 1 {
                    logger.warning(
                        "session events not applied yet",
                        metadata: ["topic": "\(record.topic)", "error": "\(String(reflecting: error))"])
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        logger.error(
            "session event dropped after retries", metadata: ["topic": "\(record.topic)", "offset": "\(record.offset)"])
    }
}
