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
