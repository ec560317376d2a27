public struct RoomInfo: Codable, Sendable, Equatable {
    public var id: RoomID
    public var position: MercatorPoint
    public var zoom: ZoomLevel
    public var topic: String

    public init(id: RoomID, position: MercatorPoint, zoom: ZoomLevel, topic: String) {
        self.id = id
        self.position = position
        self.zoom = zoom
        self.topic = topic
    }
}

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

/// A room query: a box (edges included) and an inclusive zoom range.
public struct RegionQuery: Codable, Sendable, Equatable {
    public var box: MercatorBox
    public var zooms: ClosedRange<Int>
    public var cap: Int

    public init(box: MercatorBox, zooms: ClosedRange<Int>, cap: Int) {
        self.box = box
        self.zooms = zooms
        self.cap = cap
    }
}

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

/// How many rooms there are and a checksum of their ids, as the rooms service
/// stores them and as a gateway's index holds them: equal tallies mean the
/// same set of rooms (a room's place, zoom and topic never change).
public struct RoomTally: Codable, Sendable, Equatable {
    public var count: Int
    /// The sum of the ids modulo 2^62 (`PostgresRoomStore.tally` computes the same in SQL).
    public var idChecksum: Int64

    public init(count: Int, idChecksum: Int64) {
        self.count = count
        self.idChecksum = idChecksum
    }

    /// 2^62: a checksum of positive ids stays a positive `bigint` in SQL.
    public static let checksumModulus: Int64 = 1 << 62

    /// The tally of a sum of ids kept with wrapping arithmetic (mod 2^64, a multiple of the modulus).
    public init(count: Int, wrappingIDSum: UInt64) {
        self.init(count: count, idChecksum: Int64(wrappingIDSum % UInt64(Self.checksumModulus)))
    }
}

/// A participant as the rooms service knows it; presence is judged by gateways.
public struct Member: Codable, Sendable, Equatable {
    public var session: SessionID
    public var nick: String
    /// The session version `nick` belongs to (0: from a message, version unknown).
    public var nickVersion: Int64?
    /// The member's last join or say: a sign of life the owner saw, in ms.
    public var activeAtMs: Int64?

    public init(session: SessionID, nick: String, nickVersion: Int64? = nil, activeAtMs: Int64? = nil) {
        self.session = session
        self.nick = nick
        self.nickVersion = nickVersion
        self.activeAtMs = activeAtMs
    }
}
