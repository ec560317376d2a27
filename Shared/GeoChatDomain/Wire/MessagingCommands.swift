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
    public var partitionKey: String? { String(room) }

    public init(room: RoomID, after: MessageID?, limit: Int) {
        self.room = room
        self.after = after
        self.limit = limit
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
        Say.self, ReadHistory.self, ReadHeads.self, CountMessages.self, RemoveRoomMessages.self,
    ]
}
