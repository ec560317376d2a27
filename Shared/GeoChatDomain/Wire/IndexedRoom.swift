/// A room with its last visit, as a gateway's room index holds it.
public struct IndexedRoom: Codable, Sendable, Equatable {
    public var room: RoomInfo
    /// Milliseconds since 1970, UTC.
    public var visitedAtMs: Int64

    public init(room: RoomInfo, visitedAtMs: Int64) {
        self.room = room
        self.visitedAtMs = visitedAtMs
    }
}
