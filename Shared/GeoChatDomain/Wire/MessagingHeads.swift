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

public struct RoomHead: Codable, Sendable, Equatable {
    public var room: RoomID
    public var head: MessageID

    public init(room: RoomID, head: MessageID) {
        self.room = room
        self.head = head
    }
}
