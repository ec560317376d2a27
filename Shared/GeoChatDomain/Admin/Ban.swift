import Synchronization

/// A ban as stored by the session service and broadcast on `geochat.bans`
/// (key: `target.key`). Lifting a ban is a record with `active` false and a
/// higher `version` (one database sequence orders every change).
public struct Ban: Codable, Sendable, Equatable {
    public var target: BanTarget
    public var active: Bool
    public var reason: String
    public var by: String
    public var atMs: Int64
    public var version: Int64

    public init(target: BanTarget, active: Bool, reason: String, by: String, atMs: Int64, version: Int64) {
        self.target = target
        self.active = active
        self.reason = reason
        self.by = by
        self.atMs = atMs
        self.version = version
    }
}

extension ProtocolError {
    public static let banned = ProtocolError(.banned, "this client is banned")
}
