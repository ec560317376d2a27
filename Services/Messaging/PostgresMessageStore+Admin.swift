import GeoChatDomain
import GeoChatPostgres
import PostgresNIO

/// The messaging service's part of administration: message counts per room.
extension PostgresMessageStore {
    func messageCounts(_ rooms: [RoomID]) async throws -> [RoomMessageCount] {
        let rows = try await database.client.query(
            """
            SELECT room_id, count(*) FROM messaging.messages WHERE room_id = ANY(\(rooms)) GROUP BY room_id
            """, logger: database.logger)
        var counts = Dictionary(uniqueKeysWithValues: rooms.map { ($0, 0) })
        for try await (room, n) in rows.decode((RoomID, Int64).self) { counts[room] = Int(n) }
        return rooms.map { RoomMessageCount(room: $0, messages: counts[$0] ?? 0) }
    }
}
