import Synchronization

/// The bans in force as this instance knows them (fed from `geochat.bans`).
public final class BanList: Sendable {
    private let bans = Mutex(Held())

    /// Every record by its target's key (lifted ones too: a late, older record
    /// must not bring a ban back), and how many of them are in force.
    private struct Held {
        var byKey: [String: Ban] = [:]
        var inForce = 0

        func isActive(_ target: BanTarget?) -> Bool { target.map { byKey[$0.key]?.active ?? false } ?? false }
    }

    public init() {}

    /// Takes a record unless a newer version of the same target is held.
    public func apply(_ ban: Ban) {
        bans.withLock { held in
            let key = ban.target.key
            let previous = held.byKey[key]
            if let previous, previous.version >= ban.version { return }
            held.inForce += (ban.active ? 1 : 0) - (previous?.active == true ? 1 : 0)
            held.byKey[key] = ban
        }
    }

    /// Asked by every request that names a session: with no ban in force (the
    /// usual case) the answer comes before a key is built or hashed.
    public func isBanned(session: SessionID, nick: String) -> Bool {
        bans.withLock { $0.inForce > 0 && ($0.isActive(.session(session)) || $0.isActive(.nick(nick))) }
    }

    public func isBanned(nick: String) -> Bool {
        bans.withLock { $0.inForce > 0 && $0.isActive(.nick(nick)) }
    }

    public var active: [Ban] {
        bans.withLock { $0.byKey.values.filter(\.active) }.sorted { $0.version < $1.version }
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
