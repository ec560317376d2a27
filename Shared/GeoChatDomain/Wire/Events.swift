/// Events, one type per stream. Each travels inside an `EventEnvelope` on its
/// topic, under its schema, keyed so that one room's (one session's) events
/// keep their order.
public protocol WireEvent: Codable, Sendable {
    static var topic: String { get }
    /// The envelope's `schema`; readers skip records of any other.
    static var schema: String { get }
    var partitionKey: String { get }
}

public enum SessionEvent: WireEvent, Equatable {
    case started(SessionInfo)
    case renamed(SessionInfo)
    case ended(SessionInfo, reason: String)

    public static let topic = Topics.sessionEvents
    public static let schema = "geochat.session.event.v1"

    public var session: SessionInfo {
        switch self {
        case .started(let info), .renamed(let info), .ended(let info, _): info
        }
    }

    public var partitionKey: String { session.id.value }
}

public enum RoomEvent: WireEvent, Equatable {
    case created(RoomInfo)
    /// An operator changed its topic, place or zoom level: the room as it is now.
    case changed(RoomInfo)
    case removed(room: RoomID, reason: String)
    /// Many rooms removed at once (an expiry batch); gateways answer 404 for them.
    case removedRooms(rooms: [RoomID], reason: String)
    case joined(room: RoomID, session: SessionID, nick: String)
    case left(room: RoomID, session: SessionID)

    public static let topic = Topics.roomEvents
    public static let schema = "geochat.rooms.event.v1"

    public var partitionKey: String {
        switch self {
        case .created(let info), .changed(let info): String(info.id)
        case .removed(let room, _), .joined(let room, _, _), .left(let room, _): String(room)
        // A batch is one record: it goes where its first room's events go.
        case .removedRooms(let rooms, _): rooms.first.map { String($0) } ?? ""
        }
    }
}

/// A stored message; `author` lets the rooms service count a say as a join and a visit.
public struct MessageStored: WireEvent {
    public static let topic = Topics.messageEvents
    public static let schema = "geochat.messages.event.v1"
    public var message: ChatMessage
    public var author: SessionID?
    /// The `say` this event answers: written in the envelope, not in the
    /// event (`EventEnvelope.answers`), by `enqueue(on:)`; nil as read.
    public var answers: String?
    /// On a removal: no message of the room below this id is shown, now or
    /// ever (`MessageStore.shownFrom`). Absent otherwise, and from old senders.
    public var shownFrom: MessageID?
    public var partitionKey: String { String(message.room) }

    private enum CodingKeys: String, CodingKey { case message, author, shownFrom }

    public init(message: ChatMessage, author: SessionID?, answers: String? = nil, shownFrom: MessageID? = nil) {
        self.message = message
        self.author = author
        self.answers = answers
        self.shownFrom = shownFrom
    }
}

/// An operator's removal of some of a room's messages, as one record (`RemoveMessages`): a gateway
/// replaces what it holds of them with tombstones, as it would on each tombstone's `MessageStored`
/// (the outbox relay, publishing what the broker did not take, still sends those one by one).
/// On the message events' topic, under a schema of its own, in the room's order.
public struct MessagesRemoved: WireEvent, Equatable {
    public static let topic = Topics.messageEvents
    public static let schema = "geochat.messages.removed.v1"
    public var room: RoomID
    /// Ascending.
    public var ids: [MessageID]
    /// As `MessageStored.shownFrom`: no message of the room below it is shown, now or ever.
    public var shownFrom: MessageID?
    public var partitionKey: String { String(room) }

    public init(room: RoomID, ids: [MessageID], shownFrom: MessageID? = nil) {
        self.room = room
        self.ids = ids.sorted()
        self.shownFrom = shownFrom
    }

    /// What a reader of the log learns of each: its tombstone (nick and time are not shown, so not sent).
    public var tombstones: [ChatMessage] {
        ids.map { ChatMessage(room: room, id: $0, nick: "", text: "", addedAt: 0, removed: true) }
    }
}

/// Sessions a gateway saw a request from since its previous batch.
public struct PresenceBatch: WireEvent {
    public static let topic = Topics.presence
    public static let schema = "geochat.presence.v1"
    public var gateway: String
    public var seenAtMs: Int64
    public var sessions: [SessionID]
    public var partitionKey: String { gateway }

    public init(gateway: String, seenAtMs: Int64, sessions: [SessionID]) {
        self.gateway = gateway
        self.seenAtMs = seenAtMs
        self.sessions = sessions
    }
}

/// A setting's current value, on the state topic every instance reads from its start.
extension SettingValue: WireEvent {
    public static let topic = Topics.settings
    public static let schema = "geochat.settings.v1"
    public var partitionKey: String { name }
}

/// A ban or a lifted ban, on the state topic every gateway reads from its start.
extension Ban: WireEvent {
    public static let topic = Topics.bans
    public static let schema = "geochat.bans.v1"
    public var partitionKey: String { target.key }
}
