import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatPostgres
import PostgresNIO

/// The rooms service's queries for administration.
extension PostgresRoomStore {
    /// Rooms whose topic contains `search` (any case) or whose id it is; all when
    /// empty. Most recently visited first. A scan: admin use only.
    func adminList(search: String, limit: Int) async throws -> [AdminRoom] {
        let rows = try await database.client.query(
            """
            SELECT r.id, r.x, r.y, r.z, r.topic, r.is_lobby, r.created_at, r.last_visited_at,
                   (SELECT count(*) FROM rooms.memberships m WHERE m.room_id = r.id)
            FROM rooms.rooms r
            WHERE \(search) = '' OR strpos(lower(r.topic), lower(\(search))) > 0 OR r.id::text = \(search)
            ORDER BY r.last_visited_at DESC, r.id DESC LIMIT \(limit)
            """, logger: database.logger)
        var rooms: [AdminRoom] = []
        for try await (id, x, y, z, topic, lobby, created, visited, members) in rows.decode(
            (RoomID, Double, Double, Int16, String, Bool, Date, Date, Int64).self)
        {
            rooms.append(
                AdminRoom(
                    id: id, topic: topic, x: x, y: y, z: Int(z), lobby: lobby,
                    createdAtMs: WallClock.milliseconds(created),
                    lastVisitedAtMs: WallClock.milliseconds(visited), members: Int(members)))
        }
        return rooms
    }

    /// Removes a room now, whatever its last visit, with its memberships,
    /// and keeps its id in `removed_rooms` so it is never reused.
    func removeNow(_ room: RoomID, reason: String) async throws -> Announced<AdminRemoval> {
        try await database.client.withTransaction(logger: database.logger) { tx in
            let rows = try await tx.query(
                "DELETE FROM rooms.rooms WHERE id = \(room) AND NOT is_lobby RETURNING id", logger: database.logger)
            var removed = false
            for try await _ in rows.decode(Int64.self) { removed = true }
            if removed {
                try await PostgresRoomStore.deleteMemberships(ofRemoved: [room], on: tx, logger: database.logger)
                try await tx.query(
                    "INSERT INTO rooms.removed_rooms (id, reason) VALUES (\(room), \(reason)) ON CONFLICT DO NOTHING",
                    logger: database.logger)
                // Messaging deletes the messages and gateways answer 404 on this event.
                let event = try await PostgresEventOutbox.stage(
                    try EncodedEvent(RoomEvent.removed(room: room, reason: reason)), service: Self.service, on: tx,
                    logger: database.logger)
                return Announced(.removed, event: event)
            }
            let lobby = try await tx.query(
                "SELECT 1 FROM rooms.rooms WHERE id = \(room) AND is_lobby", logger: database.logger)
            for try await _ in lobby.decode(Int32.self) { return Announced(.lobby, event: nil) }
            return Announced(.noSuchRoom, event: nil)
        }
    }
}
