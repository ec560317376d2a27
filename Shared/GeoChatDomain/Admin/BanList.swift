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
