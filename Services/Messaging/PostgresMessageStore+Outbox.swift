import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatPostgres
import PostgresNIO

/// The outbox: `messaging.outbox` holds the key of every message whose event
/// the broker has not acknowledged yet. The row is written with the message
/// (`append`), removed once the event is out.
extension PostgresMessageStore {
    func announced(_ messages: [MessageRef]) async throws {
        guard !messages.isEmpty else { return }
        try await client.query(
            """
            DELETE FROM messaging.outbox o USING unnest(\(messages.map(\.room)), \(messages.map(\.id))) AS d(room_id, id)
            WHERE o.room_id = d.room_id AND o.id = d.id
            """, logger: logger)
    }

    /// The pass holds a transaction-level advisory lock while it publishes, so
    /// passes never overlap, whichever instances run them, and a room's events
    /// leave in id order. An instance that dies mid-pass releases the lock with
    /// its connection; its rows are still there for the next pass.
    func relayUnannounced(
        olderThan grace: Duration, limit: Int, publish: @Sendable ([MessageStored]) async -> [MessageRef]
    ) async throws -> OutboxPass {
        try await client.withTransaction(logger: logger) { tx in
            guard try await Database.tryTransactionLock(Self.relayLock, on: tx, logger: logger) else {
                return .notLeader
            }
            let graceSeconds = Double(grace.components.seconds) + Double(grace.components.attoseconds) / 1e18
            let rows = try await tx.query(
                """
                SELECT o.room_id, o.id, m.nick, m.text, m.added_at, m.author_session, m.removed_at IS NOT NULL
                FROM messaging.outbox o LEFT JOIN messaging.messages m ON m.room_id = o.room_id AND m.id = o.id
                WHERE o.stored_at < now() - make_interval(secs => \(graceSeconds))
                ORDER BY o.room_id, o.id LIMIT \(limit)
                """, logger: logger)
            var due: [MessageStored] = []
            var gone: [MessageRef] = []
            for try await (room, id, nick, text, added, author, removed) in rows.decode(
                (RoomID, MessageID, String?, String?, Date?, String?, Bool?).self)
            {
                if let nick, let text, let added {
                    let message = ChatMessage(
                        room: room, id: id, nick: nick, text: text, addedAt: WallClock.milliseconds(added),
                        removed: removed ?? false)
                    due.append(MessageStored(message: message, author: author.flatMap(SessionID.init)))
                } else {
                    gone.append(MessageRef(room: room, id: id))  // its room was removed
                }
            }
            let published = due.isEmpty ? [] : await publish(due)
            let done = gone + published
            if !done.isEmpty {
                try await tx.query(
                    """
                    DELETE FROM messaging.outbox o USING unnest(\(done.map(\.room)), \(done.map(\.id))) AS d(room_id, id)
                    WHERE o.room_id = d.room_id AND o.id = d.id
                    """, logger: logger)
            }
            var backlog = 0
            for try await n in try await tx.query("SELECT count(*) FROM messaging.outbox", logger: logger).decode(
                Int64.self)
            {
                backlog = Int(n)
            }
            return .relayed(published: published.count, failed: due.count - published.count, backlog: backlog)
        }
    }
}
