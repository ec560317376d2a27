import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatPostgres
import PostgresNIO

/// The queries behind expiry: a keyset-paged selection of idle rooms and their
/// removal in batches.
extension PostgresRoomStore {
    /// Ids above `after` not visited since `before`, ascending; never the lobby.
    func idleRooms(after: RoomID, before: Date, limit: Int) async throws -> [RoomID] {
        let rows = try await database.client.query(
            """
            SELECT id FROM rooms.rooms WHERE id > \(after) AND NOT is_lobby AND last_visited_at < \(before)
            ORDER BY id LIMIT \(limit)
            """, logger: database.logger)
        var ids: [RoomID] = []
        for try await id in rows.decode(RoomID.self) { ids.append(id) }
        return ids
    }

    /// Removes those of `rooms` still idle since `before` (a visit after the
    /// selection saves a room: the check and the delete are one statement), with
    /// their memberships (cascade), and tombstones them under `reason`.
    ///
    /// Returns every one of `rooms` tombstoned under `reason`: the ones removed
    /// now and the ones an earlier attempt with the same reason removed, so a
    /// retry after a lost reply sees the whole outcome and nothing is removed twice.
    func removeIdleRooms(_ rooms: [RoomID], before: Date, reason: String) async throws
        -> Announced<(all: [RoomID], new: [RoomID])>
    {
        guard !rooms.isEmpty else { return Announced(([], []), event: nil) }
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { tx in
            let rows = try await tx.query(
                """
                WITH gone AS (
                    DELETE FROM rooms.rooms
                    WHERE id = ANY(\(rooms)) AND NOT is_lobby AND last_visited_at < \(before)
                    RETURNING id),
                tombstoned AS (
                    INSERT INTO rooms.removed_rooms (id, reason) SELECT id, \(reason) FROM gone
                    ON CONFLICT DO NOTHING)
                SELECT id, true FROM gone
                UNION ALL
                SELECT id, false FROM rooms.removed_rooms
                WHERE id = ANY(\(rooms)) AND reason = \(reason) AND id NOT IN (SELECT id FROM gone)
                """, logger: logger)
            var all: [RoomID] = []
            var new: [RoomID] = []
            for try await (id, isNew) in rows.decode((RoomID, Bool).self) {
                all.append(id)
                if isNew { new.append(id) }
            }
            // Rooms an earlier attempt removed had their event staged then.
            guard !new.isEmpty else { return Announced((all, new), event: nil) }
            let event = try await PostgresEventOutbox.stage(
                try EncodedEvent(RoomEvent.removedRooms(rooms: new, reason: reason)), service: Self.service, on: tx,
                logger: logger)
            return Announced((all, new), event: event)
        }
    }
}
