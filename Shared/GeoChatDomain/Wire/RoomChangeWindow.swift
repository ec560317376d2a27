/// The rooms a gateway's room snapshot may lack: those created with an id
/// above `above` (the highest the snapshot holds) or visited at or after
/// `sinceMs` (a room's creation is its first visit). `sinceMs` lies well
/// before the snapshot was taken, so events still on their way then, and
/// clocks that disagree, are covered (`RoomMap.snapshotMargin`).
public struct RoomChangeWindow: Codable, Sendable, Equatable {
    /// Milliseconds since 1970, UTC.
    public var sinceMs: Int64
    public var above: RoomID

    public init(sinceMs: Int64, above: RoomID) {
        self.sinceMs = sinceMs
        self.above = above
    }
}
