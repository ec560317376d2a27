/// Administration commands (topic `geochat.admin.commands`), answered by the
/// session service, which owns admin accounts, tokens, bans, settings and the
/// audit log (docs/architecture.md, "Administration"). Changes are keyed by what
/// they change, so two changes of one thing run in turn; reads need no order.

/// Granted (the token the gateway minted is now valid), or refused
/// (`rate_limited` after too many failures). Neither the password nor the
/// token travels readable: the password is sealed (`LoginSeal`), the token is
/// only named by its SHA-256.
public struct LogIn: AdminWireCommand {
    public typealias Reply = AdminAuthentication<AdminIdentity>
    public static let name = "login"
    public var name: String
    public var sealedPassword: String
    public var tokenHash: String
    /// The address the login came from, as the gateway's limits key it: failures
    /// count per name and address, so failing on purpose from one place does
    /// not lock the name out everywhere. Nil from gateways older than this field.
    public var source: String?
    public var partitionKey: String? { String(name.prefix(64)) }

    public init(name: String, sealedPassword: String, tokenHash: String, source: String? = nil) {
        self.name = name
        self.sealedPassword = sealedPassword
        self.tokenHash = tokenHash
        self.source = source
    }
}

/// Only the token's SHA-256 travels.
public struct Authenticate: AdminWireCommand {
    public typealias Reply = AdminAuthentication<AdminIdentity>
    public static let name = "authenticate"
    public var tokenHash: String
    public var partitionKey: String? { tokenHash }

    public init(tokenHash: String) { self.tokenHash = tokenHash }
}

/// Revokes the token; answered with the identity it had, ending now.
public struct LogOut: AdminWireCommand {
    public typealias Reply = AdminIdentity
    public static let name = "logout"
    public var tokenHash: String
    public var admin: String
    public var partitionKey: String? { admin }

    public init(tokenHash: String, admin: String) {
        self.tokenHash = tokenHash
        self.admin = admin
    }
}

/// Live sessions, most recently seen first; `nick` filters by prefix.
public struct ListLiveSessions: AdminWireCommand {
    public typealias Reply = [AdminSession]
    public static let name = "sessions"
    public var nick: String?
    public var limit: Int
    public var partitionKey: String? { nil }

    public init(nick: String?, limit: Int) {
        self.nick = nick
        self.limit = limit
    }
}

/// The bans in force.
public struct ListBans: AdminWireCommand {
    public typealias Reply = [Ban]
    public static let name = "bans"
    public var partitionKey: String? { nil }

    public init() {}
}

/// Answered with the ban in force.
public struct PlaceBan: AdminWireCommand {
    public typealias Reply = Ban
    public static let name = "ban"
    public var target: BanTarget
    public var reason: String
    public var by: String
    public var partitionKey: String? { target.key }

    public init(_ target: BanTarget, reason: String, by: String) {
        self.target = target
        self.reason = reason
        self.by = by
    }
}

/// Answered with the lifted ban; lifting what is not banned is `bad_param`.
public struct LiftBan: AdminWireCommand {
    public typealias Reply = Ban
    public static let name = "unban"
    public var target: BanTarget
    public var by: String
    public var partitionKey: String? { target.key }

    public init(_ target: BanTarget, by: String) {
        self.target = target
        self.by = by
    }
}

public struct ReadSettings: AdminWireCommand {
    public typealias Reply = [SettingValue]
    public static let name = "settings"
    public var partitionKey: String? { nil }

    public init() {}
}

/// All or nothing: answered with every stored setting.
public struct ChangeSettings: AdminWireCommand {
    public typealias Reply = [SettingValue]
    public static let name = "changeSettings"
    public var changes: [String: Int]
    public var by: String
    public var partitionKey: String? { "settings" }

    public init(_ changes: [String: Int], by: String) {
        self.changes = changes
        self.by = by
    }
}

/// An action carried out elsewhere (room removal, expiry run), for the audit log.
public struct RecordAudit: AdminWireCommand {
    public typealias Reply = AuditEntry
    public static let name = "audit"
    public var entry: AuditEntry
    public var partitionKey: String? { entry.actor }

    public init(_ entry: AuditEntry) { self.entry = entry }
}

/// Newest first, a page at a time, filtered (`AuditQuery`).
public struct ReadAuditLog: AdminWireCommand {
    public typealias Reply = [AuditEntry]
    public static let name = "auditLog"
    public var limit: Int
    /// Absent in commands of gateways older than the filters: the newest rows.
    public var query: AuditQuery?
    public var partitionKey: String? { nil }

    public init(limit: Int, query: AuditQuery? = nil) {
        self.limit = limit
        self.query = query
    }
}

/// Which audit rows: older than the row `before` (the last id of the page
/// before), and only those of one actor, action or outcome. Filters are exact
/// and at most `maxLength` printable characters.
public struct AuditQuery: Codable, Sendable, Equatable {
    public var before: Int64?
    public var actor: String?
    public var action: String?
    public var outcome: String?
    public static let maxLength = 64

    public init(before: Int64? = nil, actor: String? = nil, action: String? = nil, outcome: String? = nil) {
        self.before = before
        self.actor = actor
        self.action = action
        self.outcome = outcome
    }

    /// The first field that is not acceptable, with why.
    public var problem: (field: String, why: String)? {
        if let before, before < 1 { return ("before", "must be a positive audit row id") }
        for (field, value) in [("actor", actor), ("action", action), ("outcome", outcome)] {
            guard let value else { continue }
            if value.isEmpty || value.count > Self.maxLength || ControlCharacters.contains(in: value) {
                return (field, "must be 1 to \(Self.maxLength) printable characters")
            }
        }
        return nil
    }
}

/// A login or token check: granted, or refused with a reason for the audit and the admin.
public enum AdminAuthentication<Granted: Codable & Sendable>: Codable, Sendable {
    case granted(Granted)
    case refused(String)
}

/// A successful login as the admin API answers it: the bearer token (minted
/// by the gateway, shown once, stored only hashed) and its end.
public struct AdminLogin: Codable, Sendable, Equatable {
    public var token: String
    public var name: String
    public var expiresAtMs: Int64

    public init(token: String, name: String, expiresAtMs: Int64) {
        self.token = token
        self.name = name
        self.expiresAtMs = expiresAtMs
    }
}

public struct AdminIdentity: Codable, Sendable, Equatable {
    public var name: String
    public var expiresAtMs: Int64

    public init(name: String, expiresAtMs: Int64) {
        self.name = name
        self.expiresAtMs = expiresAtMs
    }
}

public struct AdminSession: Codable, Sendable, Equatable {
    public var id: String
    public var nick: String
    public var createdAtMs: Int64
    public var lastSeenAtMs: Int64

    public init(id: String, nick: String, createdAtMs: Int64, lastSeenAtMs: Int64) {
        self.id = id
        self.nick = nick
        self.createdAtMs = createdAtMs
        self.lastSeenAtMs = lastSeenAtMs
    }
}

/// One audit row: who did what to what, with what outcome (`ok`, `denied`,
/// `refused`, `failed`, `throttled`), seen by which gateway.
public struct AuditEntry: Codable, Sendable, Equatable {
    public var id: Int64?
    public var atMs: Int64?
    public var actor: String
    public var action: String
    public var target: String
    public var outcome: String
    public var detail: String
    public var gateway: String
    /// Where the request came from (logins: the client address the gateway saw); empty if not known.
    public var source: String?

    public init(
        id: Int64? = nil, atMs: Int64? = nil, actor: String, action: String, target: String, outcome: String,
        detail: String = "", gateway: String, source: String? = nil
    ) {
        self.id = id
        self.atMs = atMs
        self.actor = actor
        self.action = action
        self.target = target
        self.outcome = outcome
        self.detail = detail
        self.gateway = gateway
        self.source = source
    }
}

/// A room as operators see it: place, topic, last visit, members (rooms service)
/// and messages (messaging service).
public struct AdminRoom: Codable, Sendable, Equatable {
    public var id: RoomID
    public var topic: String
    public var x: Double
    public var y: Double
    public var z: Int
    public var lobby: Bool
    public var createdAtMs: Int64
    public var lastVisitedAtMs: Int64
    public var members: Int
    public var messages: Int?
    /// Members seen within the presence timeout (filled by the gateway).
    public var participants: [String]?

    public init(
        id: RoomID, topic: String, x: Double, y: Double, z: Int, lobby: Bool, createdAtMs: Int64,
        lastVisitedAtMs: Int64, members: Int, messages: Int? = nil, participants: [String]? = nil
    ) {
        self.id = id
        self.topic = topic
        self.x = x
        self.y = y
        self.z = z
        self.lobby = lobby
        self.createdAtMs = createdAtMs
        self.lastVisitedAtMs = lastVisitedAtMs
        self.members = members
        self.messages = messages
        self.participants = participants
    }
}

public struct RoomMessageCount: Codable, Sendable, Equatable {
    public var room: RoomID
    public var messages: Int

    public init(room: RoomID, messages: Int) {
        self.room = room
        self.messages = messages
    }
}
