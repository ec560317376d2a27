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
