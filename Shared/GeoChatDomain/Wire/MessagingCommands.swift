/// The messaging service's commands (topic `geochat.messaging.commands`), keyed
/// by room id: one room's messages are stored by one writer, in order.

public struct Say: MessagingWireCommand {
    public typealias Reply = ChatMessage
    public static let name = "say"
    public var room: RoomID
    /// nil for the add/messages dialect, which has no sessions.
    public var session: SessionID?
    public var nick: String
    public var text: MessageText
    public var partitionKey: String? { String(room) }

    public init(room: RoomID, session: SessionID?, nick: String, text: MessageText) {
        self.room = room
        self.session = session
        self.nick = nick
        self.text = text
    }
}

/// Messages with id > `after` (oldest first), or the latest `limit` when `after` is nil.
public struct ReadHistory: MessagingWireCommand {
    public typealias Reply = MessageHistory
    public static let name = "history"
    public var room: RoomID
    public var after: MessageID?
    public var limit: Int
    /// True: removed messages are left out, and `limit` counts what is shown
    /// (an answer to a reader). Otherwise (nil from older gateways) their
    /// tombstones come too, so that ids stay dense (a gateway's timeline).
    public var skipRemoved: Bool?
    public var partitionKey: String? { String(room) }

    public init(room: RoomID, after: MessageID?, limit: Int, skipRemoved: Bool = false) {
        self.room = room
        self.after = after
        self.limit = limit
        self.skipRemoved = skipRemoved ? true : nil
    }
}

/// An operator's removal of messages: each becomes a tombstone (its text gone,
/// its id kept, so ids stay dense) and its event says so to every gateway.
/// At most `limit` a command, oldest first: a long removal is repeated until
/// `RemovedMessages.more` is false. Sealed (`OperatorSeal`): refused without it.
public struct RemoveMessages: MessagingWireCommand, OperatorCommand {
    public typealias Reply = RemovedMessages
    public static let name = "removeMessages"
    public var selection: MessageSelection
    public var limit: Int
    /// The operator asking (for the log; the audit row is the gateway's).
    public var by: String
    public var seal: String?
    /// One room's removals go where its says go; a session's everywhere, anywhere.
    public var partitionKey: String? { selection.room.map { String($0) } }
    public var sealedFields: [String] {
        switch selection {
        case .message(let room, let id): ["message", String(room), String(id), String(limit), by]
        case .bySession(let session, let room, let since):
            ["session", session.value, room.map { String($0) } ?? "", String(since), String(limit), by]
        case .bySenderOf(let message, let room, let since):
            [
                "sender", String(message.room), String(message.id), room.map { String($0) } ?? "", String(since),
                String(limit), by,
            ]
        }
    }

    public static let maxLimit = 10_000

    public init(_ selection: MessageSelection, limit: Int = maxLimit, by: String) {
        self.selection = selection
        self.limit = limit
        self.by = by
    }
}

/// Which messages a removal takes.
public enum MessageSelection: Codable, Sendable, Equatable, CustomStringConvertible {
    /// One message: no such message (an id above the room's head, an unknown
    /// or removed room) is `no_such_chat`; one removed already is no change.
    case message(room: RoomID, id: MessageID)
    /// A session's messages stored at or after `sinceMs`, in one room or (nil) everywhere.
    case bySession(SessionID, room: RoomID?, sinceMs: Int64)
    /// The messages of whoever wrote `message` (its session), as `bySession`:
    /// what an operator reading a room picks, who sees nicknames, not session
    /// ids. `message` not there is `no_such_chat`; one without a known sender
    /// (stored before senders were kept) selects nothing.
    case bySenderOf(MessageKey, room: RoomID?, sinceMs: Int64)

    public var room: RoomID? {
        switch self {
        case .message(let room, _): room
        case .bySession(_, let room, _): room
        case .bySenderOf(_, let room, _): room
        }
    }

    public var description: String {
        switch self {
        case .message(let room, let id): "message \(id) in room \(room)"
        case .bySession(let session, let room, let since):
            // A session id is a bearer secret: logs and the audit get its prefix (`SessionID.description`).
            "messages of session \(session) \(room.map { "in room \($0)" } ?? "in every room")"
                + (since > 0 ? " since \(UTCTimestamp.rfc3339(millisecondsSince1970: since))" : "")
        case .bySenderOf(let message, let room, let since):
            "messages of the sender of message \(message.id) in room \(message.room) "
                + (room.map { "in room \($0)" } ?? "in every room")
                + (since > 0 ? " since \(UTCTimestamp.rfc3339(millisecondsSince1970: since))" : "")
        }
    }
}

/// What one `RemoveMessages` did: the messages it removed (room and id, for
/// the operator and the audit), and whether more are selected still.
public struct RemovedMessages: Codable, Sendable, Equatable {
    public var removed: [MessageKey]
    public var more: Bool

    public init(removed: [MessageKey], more: Bool) {
        self.removed = removed
        self.more = more
    }
}

/// A message by its place in a room's log.
public struct MessageKey: Codable, Sendable, Hashable {
    public var room: RoomID
    public var id: MessageID

    public init(room: RoomID, id: MessageID) {
        self.room = room
        self.id = id
    }
}

/// Deletes the messages of rooms the rooms service removed and tombstones their
/// logs (idempotent). Sent by expiry after `RemoveIdleRooms`, sealed
/// (`OperatorSeal`): refused without it.
public struct RemoveRoomMessages: MessagingWireCommand, OperatorCommand {
    public typealias Reply = Done
    public static let name = "removeRooms"
    public var rooms: [RoomID]
    /// The expiry job and batch asking: batches of one job are cleared side by side.
    public var job: Int64
    public var batch: Int
    public var seal: String?
    public var partitionKey: String? { "expiry-\(job)-\(batch)" }
    public var sealedFields: [String] { [rooms.map(String.init).joined(separator: ","), String(job), String(batch)] }

    public init(rooms: [RoomID], job: Int64, batch: Int) {
        self.rooms = rooms
        self.job = job
        self.batch = batch
    }
}

/// Administration: how many messages each room holds.
public struct CountMessages: MessagingWireCommand {
    public typealias Reply = [RoomMessageCount]
    public static let name = "messageCounts"
    public var rooms: [RoomID]
    public var partitionKey: String? { nil }

    public init(rooms: [RoomID]) { self.rooms = rooms }
}

extension WireCommands {
    /// The commands of the messaging service: a new one is listed here (`WireCommands.all`).
    public static let messagingCommands: [any WireCommand.Type] = [
        Say.self, ReadHistory.self, ReadHeads.self, CountMessages.self, RemoveRoomMessages.self, RemoveMessages.self,
    ]
}
