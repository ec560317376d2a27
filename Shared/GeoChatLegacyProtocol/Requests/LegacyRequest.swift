import GeoChatDomain

/// A legacy request, fully checked: every value in it obeys the contract.
public enum LegacyRequest: Sendable, Equatable {
    case chat(ChatCommand)
    /// `/add.php`: a post to the lobby under a name given with the post.
    case lobbyPost(user: String, message: MessageText)
    /// `/messages.php`: the lobby's messages after `past` (0: the latest).
    case lobbyMessages(past: MessageID)
}

extension LegacyRequest {
    /// Its label in the request metrics: the command's name, or the lobby's two.
    public var name: String {
        switch self {
        case .chat(let command): command.name
        case .lobbyPost: "lobby_post"
        case .lobbyMessages: "lobby_messages"
        }
    }

    /// The session the request names (`ChatCommand.session`); the lobby's dialect has none.
    public var session: SessionID? {
        if case .chat(let command) = self { command.session } else { nil }
    }

    /// `/add.php` (contract 4).
    public static func parseLobbyPost(_ p: FormParameters) throws(ProtocolError) -> LegacyRequest {
        let user = try p.chatText(["user"], length: Limits.lobbyUserLength)
        let message = try p.checked(MessageText.self, ["message"], length: Limits.lobbyMessageLength)
        return .lobbyPost(user: user, message: message)
    }

    /// `/messages.php` (contract 4).
    public static func parseLobbyMessages(_ p: FormParameters) throws(ProtocolError) -> LegacyRequest {
        .lobbyMessages(past: try p.past())
    }
}
