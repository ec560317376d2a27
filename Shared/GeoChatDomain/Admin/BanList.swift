import Synchronization

/// The bans in force as this instance knows them (fed from `geochat.bans`).
public final class BanList: Sendable {
    private let bans = Mutex<[String: Ban]>([:])

    public init() {}

    /// Takes a record unless a newer version of the same target is held.
    public func apply(_ ban: Ban) {
        bans.withLock { bans in
            if let held = bans[ban.target.key], held.version >= ban.version { return }
            bans[ban.target.key] = ban
        }
    }

    public func isBanned(session: SessionID, nick: String) -> Bool {
        isBanned(BanTarget.session(session)) || isBanned(nick: nick)
    }

    public func isBanned(nick: String) -> Bool {
        guard let target = BanTarget.nick(nick) else { return false }
        return isBanned(target)
    }

    func isBanned(_ target: BanTarget) -> Bool {
        bans.withLock { $0[target.key]?.active ?? false }
    }

    public var active: [Ban] {
        bans.withLock { $0.values.filter(\.active) }.sorted { $0.version < $1.version }
    }
}

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
