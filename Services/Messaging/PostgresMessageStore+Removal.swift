import GeoChatDomain
import PostgresNIO

extension PostgresMessageStore {
    /// Tombstones the logs of many removed rooms and deletes their messages, in
    /// one transaction (all or nothing); repeating it changes nothing. Returns
    /// how many messages went.
    func remove(rooms: [RoomID]) async throws -> Int {
        guard !rooms.isEmpty else { return 0 }
        return try await database.client.withTransaction(logger: database.logger) { tx in
            try await tx.query(
                """
                INSERT INTO messaging.room_logs (room_id, removed_at) SELECT unnest(\(rooms)::bigint[]), now()
                ON CONFLICT (room_id) DO UPDATE SET removed_at = coalesce(messaging.room_logs.removed_at, now())
                WHERE messaging.room_logs.removed_at IS NULL
                """, logger: database.logger)
            let rows = try await tx.query(
                """
                WITH deleted AS (DELETE FROM messaging.messages WHERE room_id = ANY(\(rooms)) RETURNING 1)
                SELECT count(*) FROM deleted
                """, logger: database.logger)
            var count = 0
            for try await n in rows.decode(Int64.self) { count = Int(n) }
            return count
        }
    }
}
