/// Plain values that travel between services.

public struct SessionInfo: Codable, Sendable, Equatable {
    public var id: SessionID
    public var nick: String
    /// Grows with every change, so a reader can drop stale news.
    public var version: Int64
    public var ended: Bool

    public init(id: SessionID, nick: String, version: Int64, ended: Bool = false) {
        self.id = id
        self.nick = nick
        self.version = version
        self.ended = ended
    }
}

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

public struct ChatMessage: Codable, Sendable, Equatable {
    public var room: RoomID
    public var id: MessageID
    public var nick: String
    public var text: String
    /// Milliseconds since 1970, UTC.
    public var addedAt: Int64

    public init(room: RoomID, id: MessageID, nick: String, text: String, addedAt: Int64) {
        self.room = room
        self.id = id
        self.nick = nick
        self.text = text
        self.addedAt = addedAt
    }
}

/// A participant as the rooms service knows it; presence is judged by gateways.
public struct Member: Codable, Sendable, Equatable {
    public var session: SessionID
    public var nick: String

    public init(session: SessionID, nick: String) {
        self.session = session
        self.nick = nick
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
