/// Events, one enum per publishing service. Each travels inside an `EventEnvelope`.

public enum SessionEvent: Codable, Sendable {
    case started(SessionInfo)
    case renamed(SessionInfo)
    case ended(SessionInfo, reason: String)
}

public enum RoomEvent: Codable, Sendable {
    case created(RoomInfo)
    case removed(room: RoomID, reason: String)
    /// Many rooms removed at once (an expiry batch); gateways answer 404 for them.
    case removedRooms(rooms: [RoomID], reason: String)
    case joined(room: RoomID, session: SessionID, nick: String)
    case left(room: RoomID, session: SessionID)
}

/// A stored message; `author` lets the rooms service count a say as a join and a visit.
public struct MessageStored: Codable, Sendable {
    public var message: ChatMessage
    public var author: SessionID?

    public init(message: ChatMessage, author: SessionID?) {
        self.message = message
        self.author = author
    }
}

/// Sessions a gateway saw a request from since its previous batch.
public struct PresenceBatch: Codable, Sendable {
    public var gateway: String
    public var seenAtMs: Int64
    public var sessions: [SessionID]

    public init(gateway: String, seenAtMs: Int64, sessions: [SessionID]) {
        self.gateway = gateway
        self.seenAtMs = seenAtMs
        self.sessions = sessions
    }
}
