/// One room as `RoomIndex` holds it: 40 bytes in one array, slot by slot, with
/// everything a query reads of a room in one cache line (its place and last
/// visit to pick it, its id to order it, its zoom and topic to answer it). The
/// topic's bytes are in the index's `TopicBuffer`.
struct RoomRecord {
    /// A slot that holds no room (free for the next one) has this zoom.
    static let free: UInt8 = .max

    var id: Int64
    var x: Double
    var y: Double
    var visitedAtMs: Int64
    var topicOffset: UInt32
    var topicLength: UInt16
    var zoom: UInt8

    var isFree: Bool { zoom == Self.free }

    /// Whether this room is taken after `other` (later visit, or the higher id at the same time).
    func isNewer(thanVisit visitedAtMs: Int64, id: Int64) -> Bool { (self.visitedAtMs, self.id) > (visitedAtMs, id) }
}
