import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatPostgres
import PostgresNIO

/// What expiry asks of the rooms service, stored: a keyset-paged selection of
/// idle rooms and their removal in batches; the PostgreSQL version, then the in-memory one.
protocol RoomExpiry: Sendable {
    /// Expiry's selection: ids above `after` last visited before `before`, ascending, never the lobby.
    func idleRooms(after: RoomID, before: Date, limit: Int) async throws -> [RoomID]
    /// Removes those of `rooms` still idle; `all`: every one of them removed under `reason`, ever.
    /// The event names the `new` ones (an earlier attempt staged the others').
    func removeIdleRooms(_ rooms: [RoomID], before: Date, reason: String) async throws
        -> Announced<(all: [RoomID], new: [RoomID])>
}

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
    /// their memberships (one statement after), and tombstones them under `reason`.
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
            let removed = try await tx.query(
                """
                WITH gone AS (
                    DELETE FROM rooms.rooms
                    WHERE id = ANY(\(rooms)) AND NOT is_lobby AND last_visited_at < \(before)
                    RETURNING id),
                tombstoned AS (
                    INSERT INTO rooms.removed_rooms (id, reason) SELECT id, \(reason) FROM gone
                    ON CONFLICT DO NOTHING)
                SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM gone
                """, logger: logger)
            // One row with an array: a row per room cost more to decode than the delete took.
            var new: [RoomID] = []
            for try await ids in removed.decode([RoomID].self) { new = ids }
            try await PostgresRoomStore.deleteMemberships(ofRemoved: new, on: tx, logger: logger)
            // Only the rest can have been removed by an earlier attempt: usually none, so no
            // lookup. (One statement for both read the whole of `removed_rooms`, which keeps
            // every removal ever, once per batch: docs/benchmarks.md, "Expiry".)
            let rest = Array(Set(rooms).subtracting(new))
            var earlier: [RoomID] = []
            if !rest.isEmpty {
                let rows = try await tx.query(
                    "SELECT id FROM rooms.removed_rooms WHERE id = ANY(\(rest)) AND reason = \(reason)",
                    logger: logger)
                for try await id in rows.decode(RoomID.self) { earlier.append(id) }
            }
            let all = (new + earlier).sorted()
            // Rooms an earlier attempt removed had their event staged then.
            guard !new.isEmpty else { return Announced((all, new), event: nil) }
            let event = try await PostgresEventOutbox.stage(
                try EncodedEvent(RoomEvent.removedRooms(rooms: new, reason: reason)), service: Self.service, on: tx,
                logger: logger)
            return Announced((all, new), event: event)
        }
    }
}

extension InMemoryRoomStore {
    func idleRooms(after: RoomID, before: Date, limit: Int) async throws -> [RoomID] {
        let cutoff = WallClock.milliseconds(before)
        return state.withLock { state in
            Array(
                state.rooms.values.filter { $0.info.id > after && !$0.isLobby && $0.lastVisitedMs < cutoff }
                    .map(\.info.id).sorted().prefix(limit))
        }
    }

    func removeIdleRooms(_ rooms: [RoomID], before: Date, reason: String) async throws
        -> Announced<(all: [RoomID], new: [RoomID])>
    {
        let cutoff = WallClock.milliseconds(before)
        return try state.withLock { state in
            var all: [RoomID] = []
            var new: [RoomID] = []
            for id in rooms {
                if let room = state.rooms[id], !room.isLobby, room.lastVisitedMs < cutoff {
                    state.rooms[id] = nil
                    state.removed[id] = state.removed[id] ?? reason
                    state.removedAtMs[id] = state.removedAtMs[id] ?? now()
                    all.append(id)
                    new.append(id)
                } else if state.removed[id] == reason, !all.contains(id) {
                    all.append(id)
                }
            }
            guard !new.isEmpty else { return Announced((all, new), event: nil) }
            return Announced((all, new), event: try stage(.removedRooms(rooms: new, reason: reason)))
        }
    }
}
