/// The session service's commands (topic `geochat.session.commands`), keyed by
/// session id; a start by its idempotency key, so a retried start is one session.

public struct StartSession: SessionWireCommand {
    public typealias Reply = SessionInfo
    public static let name = "start"
    public var nick: String
    public var partitionKey: String? { nil }

    public init(nick: String) { self.nick = nick }
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
    public var nick: String
    public var partitionKey: String? { session.value }

    public init(session: SessionID, nick: String) {
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
