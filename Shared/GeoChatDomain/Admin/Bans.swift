import Synchronization

/// What a ban names: a nickname (any session using it, matched without regard
/// to ASCII case, so `Bob` cannot dodge a ban on `bob`) or one session.
public struct BanTarget: Codable, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Codable, Sendable {
        case nick
        case session
    }

    public let kind: Kind
    public let value: String

    /// Nil unless the value is a valid nickname or session id.
    public init?(kind: Kind, value: String) {
        switch kind {
        case .nick: guard Nickname(value) != nil else { return nil }
        case .session: guard SessionID(value) != nil else { return nil }
        }
        self.kind = kind
        self.value = value
    }

    public static func nick(_ nick: String) -> BanTarget? { BanTarget(kind: .nick, value: nick) }
    public static func session(_ id: SessionID) -> BanTarget { BanTarget(kind: .session, value: id.value)! }

    /// The record key on `geochat.bans` and the table's key: `nick:bob`, `session:<id>`.
    public var key: String {
        switch kind {
        case .nick: "nick:" + value.lowercased()
        case .session: "session:" + value
        }
    }

    public init(from decoder: any Decoder) throws {
        struct Raw: Decodable {
            var kind: Kind
            var value: String
        }
        let raw = try Raw(from: decoder)
        guard let target = BanTarget(kind: raw.kind, value: raw.value) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a valid \(raw.kind)"))
        }
        self = target
    }

    /// Session ids are bearer secrets: logs get a prefix only.
    public var description: String {
        switch kind {
        case .nick: "nick \(value)"
        case .session: "session \(value.prefix(6))…"
        }
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

extension ProtocolError {
    public static let banned = ProtocolError(.banned, "this client is banned")
}
