/// A message of a room's log. A removed one (an operator's removal) stays in
/// the log as a tombstone, its text gone, so that ids stay dense (the polling
/// contract's gap-free runs rest on it); readers never show it.
public struct ChatMessage: Codable, Sendable, Equatable {
    public var room: RoomID
    public var id: MessageID
    public var nick: String
    public var text: String
    /// Milliseconds since 1970, UTC.
    public var addedAt: Int64
    /// Removed by an operator: a tombstone, its text empty. On the wire only when true.
    public var removed: Bool

    public init(room: RoomID, id: MessageID, nick: String, text: String, addedAt: Int64, removed: Bool = false) {
        self.room = room
        self.id = id
        self.nick = nick
        self.text = removed ? "" : text
        self.addedAt = addedAt
        self.removed = removed
    }

    /// The message as its tombstone: what every reader of the log learns once it is removed.
    public var tombstone: ChatMessage {
        ChatMessage(room: room, id: id, nick: nick, text: "", addedAt: addedAt, removed: true)
    }

    private enum CodingKeys: String, CodingKey { case room, id, nick, text, addedAt, removed }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            room: try container.decode(RoomID.self, forKey: .room),
            id: try container.decode(MessageID.self, forKey: .id),
            nick: try container.decode(String.self, forKey: .nick),
            text: try container.decode(String.self, forKey: .text),
            addedAt: try container.decode(Int64.self, forKey: .addedAt),
            removed: try container.decodeIfPresent(Bool.self, forKey: .removed) ?? false)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(room, forKey: .room)
        try container.encode(id, forKey: .id)
        try container.encode(nick, forKey: .nick)
        try container.encode(text, forKey: .text)
        try container.encode(addedAt, forKey: .addedAt)
        if removed { try container.encode(true, forKey: .removed) }
    }
}

public struct MessageHistory: Codable, Sendable, Equatable {
    public var room: RoomID
    /// The room's highest stored id when the history was read (0 for none yet).
    public var head: MessageID
    public var messages: [ChatMessage]
    /// How many of the room's messages operators had removed when it was read (nil from an older
    /// messaging service): a timeline's start for the head check's second number (`RoomHead.removed`).
    public var removed: Int64?

    public init(room: RoomID, head: MessageID, messages: [ChatMessage], removed: Int64? = nil) {
        self.room = room
        self.head = head
        self.messages = messages
        self.removed = removed
    }
}

/// Read-model upkeep between gateways and the messaging service (topic
/// `geochat.messaging.commands`).

/// The committed head (highest message id) of each room asked about, in one
/// read: a gateway checks the rooms its pollers follow, so a message whose event
/// never reached it is noticed without waiting for the room's next message.
/// Rooms with no log here (unknown or removed) are left out of the answer.
public struct ReadHeads: MessagingWireCommand {
    public typealias Reply = [RoomHead]
    public static let name = "heads"
    public var rooms: [RoomID]
    /// A read: it needs no order with a room's writes (a head read a moment
    /// early is caught by the next check), so it goes to any partition.
    public var partitionKey: String? { nil }

    public init(rooms: [RoomID]) { self.rooms = rooms }
}

/// On the wire a pair `[room, head]`, not an object: a gateway reads the heads
/// of every room it serves every few seconds, and the keys were half of the
/// bytes an idle phone cost Kafka (docs/capacity.md). A room with messages
/// removed by operators has a third number, how many: a gateway that missed a
/// removal's event finds it by it (`[room, head, removed]`).
public struct RoomHead: Codable, Sendable, Equatable {
    public var room: RoomID
    public var head: MessageID
    public var removed: Int64

    public init(room: RoomID, head: MessageID, removed: Int64 = 0) {
        self.room = room
        self.head = head
        self.removed = removed
    }

    public init(from decoder: any Decoder) throws {
        var pair = try decoder.unkeyedContainer()
        room = try pair.decode(RoomID.self)
        head = try pair.decode(MessageID.self)
        removed = pair.isAtEnd ? 0 : try pair.decode(Int64.self)
        guard pair.isAtEnd else {
            throw DecodingError.dataCorruptedError(in: pair, debugDescription: "a room head is [room, head, removed?]")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var pair = encoder.unkeyedContainer()
        try pair.encode(room)
        try pair.encode(head)
        if removed > 0 { try pair.encode(removed) }
    }
}
