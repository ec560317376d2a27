import GeoChatBus
import GeoChatDomain
import GeoChatKafka

/// What `append` did.
enum Appended: Equatable {
    /// Stored under the room's next id; its event is in the outbox.
    case stored(ChatMessage)
    /// A repeat within `MessageRules.repeatWindow`: the earlier message, stored once.
    case repeated(ChatMessage, author: SessionID?)

    var message: ChatMessage {
        switch self {
        case .stored(let message), .repeated(let message, _): message
        }
    }
}
