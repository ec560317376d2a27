import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatPostgres
import PostgresNIO

/// What operators do to rooms (the admin API's rooms commands), stored: the
/// requirements, then the PostgreSQL version, then the in-memory one.
protocol RoomAdministration: Sendable {
    func adminList(search: String, limit: Int) async throws -> [AdminRoom]
    func removeNow(_ room: RoomID, reason: String) async throws -> Announced<AdminRemoval>
    /// An operator's change of a room's topic, place or zoom level (nil: kept), with its `changed`
    /// event staged in the same transaction; a changed room is in the change windows of `page`.
    func change(_ room: RoomID, topic: String?, position: MercatorPoint?, zoom: ZoomLevel?) async throws
        -> Announced<AdminChange>
}

enum AdminRemoval { case removed, noSuchRoom, lobby }

enum AdminChange: Equatable {
    case changed(RoomInfo)
    case noSuchRoom, lobby
}

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

    /// Changes what is given of a room's topic, place and zoom level, and
    /// stages its `changed` event in the same transaction. The lobby is left alone.
    func change(_ room: RoomID, topic: String?, position: MercatorPoint?, zoom: ZoomLevel?) async throws
        -> Announced<AdminChange>
    {
        let z = zoom.map { Int16($0.value) }
        return try await database.client.withTransaction(logger: database.logger) { tx in
            let rows = try await tx.query(
                """
                UPDATE rooms.rooms SET topic = coalesce(\(topic), topic), x = coalesce(\(position?.x), x),
                    y = coalesce(\(position?.y), y), z = coalesce(\(z), z), changed_at = now()
                WHERE id = \(room) AND NOT is_lobby RETURNING x, y, z, topic
                """, logger: database.logger)
            for try await (x, y, z, topic) in rows.decode((Double, Double, Int16, String).self) {
                guard let position = MercatorPoint(x: x, y: y), let zoom = ZoomLevel(Int(z)) else { break }
                let info = RoomInfo(id: room, position: position, zoom: zoom, topic: topic)
                let event = try await PostgresEventOutbox.stage(
                    try EncodedEvent(RoomEvent.changed(info)), service: Self.service, on: tx, logger: database.logger)
                return Announced(.changed(info), event: event)
            }
            let lobby = try await tx.query(
                "SELECT 1 FROM rooms.rooms WHERE id = \(room) AND is_lobby", logger: database.logger)
            for try await _ in lobby.decode(Int32.self) { return Announced(.lobby, event: nil) }
            return Announced(.noSuchRoom, event: nil)
        }
    }
}

extension InMemoryRoomStore {
    func adminList(search: String, limit: Int) async throws -> [AdminRoom] {
        state.withLock { state in
            state.rooms.values
                .filter {
                    search.isEmpty || $0.info.topic.lowercased().contains(search.lowercased())
                        || String($0.info.id) == search
                }
                .sorted { ($0.lastVisitedMs, $0.info.id) > ($1.lastVisitedMs, $1.info.id) }
                .prefix(limit)
                .map {
                    AdminRoom(
                        id: $0.info.id, topic: $0.info.topic, x: $0.info.position.x, y: $0.info.position.y,
                        z: $0.info.zoom.value, lobby: $0.isLobby, createdAtMs: $0.createdAtMs,
                        lastVisitedAtMs: $0.lastVisitedMs, members: $0.members.count)
                }
        }
    }

    func removeNow(_ room: RoomID, reason: String) async throws -> Announced<AdminRemoval> {
        try state.withLock { state in
            guard let found = state.rooms[room] else { return Announced(.noSuchRoom, event: nil) }
            if found.isLobby { return Announced(.lobby, event: nil) }
            state.rooms[room] = nil
            state.removed[room] = state.removed[room] ?? reason
            state.removedAtMs[room] = state.removedAtMs[room] ?? now()
            return Announced(.removed, event: try stage(.removed(room: room, reason: reason)))
        }
    }

    func change(_ room: RoomID, topic: String?, position: MercatorPoint?, zoom: ZoomLevel?) async throws
        -> Announced<AdminChange>
    {
        try state.withLock { state in
            guard var found = state.rooms[room] else { return Announced(.noSuchRoom, event: nil) }
            if found.isLobby { return Announced(.lobby, event: nil) }
            found.info.topic = topic ?? found.info.topic
            found.info.position = position ?? found.info.position
            found.info.zoom = zoom ?? found.info.zoom
            found.changedAtMs = now()
            state.rooms[room] = found
            return Announced(.changed(found.info), event: try stage(.changed(found.info)))
        }
    }
}
