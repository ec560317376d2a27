import GeoChatBus
import GeoChatDomain
import GeoChatKafka

/// A message by its key, as the outbox names it (public: the key of a public
/// conformance, `MessageStored: OutboxEntry`).
public struct MessageRef: Hashable, Sendable {
    let room: RoomID
    let id: MessageID

    init(room: RoomID, id: MessageID) {
        self.room = room
        self.id = id
    }

    init(_ message: ChatMessage) { self.init(room: message.room, id: message.id) }
}
