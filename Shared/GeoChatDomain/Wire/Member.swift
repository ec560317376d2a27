/// A participant as the rooms service knows it; presence is judged by gateways.
public struct Member: Codable, Sendable, Equatable {
    public var session: SessionID
    public var nick: String
    /// The session version `nick` belongs to (0: from a message, version unknown).
    public var nickVersion: Int64?
    /// The member's last join or say: a sign of life the owner saw, in ms.
    public var activeAtMs: Int64?

    public init(session: SessionID, nick: String, nickVersion: Int64? = nil, activeAtMs: Int64? = nil) {
        self.session = session
        self.nick = nick
        self.nickVersion = nickVersion
        self.activeAtMs = activeAtMs
    }
}
