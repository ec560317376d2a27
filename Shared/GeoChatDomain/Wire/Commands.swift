/// Commands, one enum per owning service. Each travels inside a `RequestEnvelope`.

public enum SessionCommand: Codable, Sendable {
    case start(nick: String)
    case lookup(session: SessionID)
    case rename(session: SessionID, nick: String)
    case end(session: SessionID)
}

public enum RoomsCommand: Codable, Sendable {
    case create(session: SessionID, position: MercatorPoint, zoom: ZoomLevel, topic: String)
    case region(RegionQuery)
    case lookup(room: RoomID)
    case lobby
    case join(room: RoomID, session: SessionID, nick: String)
    case leave(room: RoomID, session: SessionID)
    case members(room: RoomID)
    /// Rooms whose last visit is before `idleBeforeMs`, oldest first (never the lobby).
    case idleRooms(idleBeforeMs: Int64, limit: Int)
    /// Removes the room if it is still idle since `idleBeforeMs` (checked again in the same transaction).
    case removeIdle(room: RoomID, idleBeforeMs: Int64)
}

public enum MessagingCommand: Codable, Sendable {
    /// `session` is nil for the add/messages dialect, which has no sessions.
    case say(room: RoomID, session: SessionID?, nick: String, text: String)
    /// Messages with id > `after` (oldest first), or the latest `limit` when `after` is nil.
    case history(room: RoomID, after: MessageID?, limit: Int)
}

/// What a service answers; the requester expects the case that fits its command.
public enum ReplyBody: Codable, Sendable {
    case done
    case session(SessionInfo)
    case room(RoomInfo)
    case rooms([RoomInfo])
    case members([Member])
    case posted(ChatMessage)
    case history(MessageHistory)
    case roomIDs([RoomID])
    case removed(Bool)
}

public struct MessageHistory: Codable, Sendable, Equatable {
    public var room: RoomID
    /// The room's highest stored id when the history was read (0 for none yet).
    public var head: MessageID
    public var messages: [ChatMessage]

    public init(room: RoomID, head: MessageID, messages: [ChatMessage]) {
        self.room = room
        self.head = head
        self.messages = messages
    }
}
