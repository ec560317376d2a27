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
