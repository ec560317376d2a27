/// The session service's commands (topic `geochat.session.commands`), keyed by
/// session id; a start by its idempotency key, so a retried start is one session.

public struct StartSession: SessionWireCommand {
    public typealias Reply = SessionInfo
    public static let name = "start"
    public var nick: Nickname
    public var partitionKey: String? { nil }

    public init(nick: Nickname) { self.nick = nick }
}

public struct LookupSession: SessionWireCommand {
    public typealias Reply = SessionInfo
    public static let name = "lookup"
    public var session: SessionID
    public var partitionKey: String? { session.value }

    public init(session: SessionID) { self.session = session }
}

public struct RenameSession: SessionWireCommand {
    public typealias Reply = SessionInfo
    public static let name = "rename"
    public var session: SessionID
    public var nick: Nickname
    public var partitionKey: String? { session.value }

    public init(session: SessionID, nick: Nickname) {
        self.session = session
        self.nick = nick
    }
}

public struct EndSession: SessionWireCommand {
    public typealias Reply = SessionInfo
    public static let name = "end"
    public var session: SessionID
    public var partitionKey: String? { session.value }

    public init(session: SessionID) { self.session = session }
}

/// A session as the services pass it between them (wire values: `Wire/`).
public struct SessionInfo: Codable, Sendable, Equatable {
    public var id: SessionID
    public var nick: String
    /// Grows with every change, so a reader can drop stale news.
    public var version: Int64
    public var ended: Bool

    public init(id: SessionID, nick: String, version: Int64, ended: Bool = false) {
        self.id = id
        self.nick = nick
        self.version = version
        self.ended = ended
    }
}

extension WireCommands {
    /// The commands of the session service: a new one is listed here (`WireCommands.all`).
    public static let sessionCommands: [any WireCommand.Type] = [
        StartSession.self, LookupSession.self, RenameSession.self, EndSession.self,
    ]
}
