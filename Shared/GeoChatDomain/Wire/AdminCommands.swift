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

extension WireCommands {
    /// The commands of administration (the session service): a new one is listed here (`WireCommands.all`).
    public static let adminCommands: [any WireCommand.Type] = [
        LogIn.self, LogOut.self, Authenticate.self, ListLiveSessions.self, ListBans.self, PlaceBan.self, LiftBan.self,
        ReadSettings.self, ChangeSettings.self, ReadAuditLog.self, RecordAudit.self,
    ]
}
