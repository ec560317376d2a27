/// Administration commands, answered by the session service, which owns admin
/// accounts, tokens, bans, settings and the audit log (docs/architecture.md,
/// "Administration"). Topic `geochat.admin.commands`; replies are
/// `ReplyBody.admin(AdminReply)` or a `ProtocolError`.
public enum AdminCommand: Codable, Sendable {
    /// Answered `.token` or `.unauthorized`; `rate_limited` after too many failures.
    case login(name: String, password: String)
    /// Answered `.identity` or `.unauthorized`. Only the token's SHA-256 travels.
    case authenticate(tokenHash: String)
    /// Revokes the token. Answered `.done`.
    case logout(tokenHash: String, admin: String)
    /// Live sessions, most recently seen first; `nick` filters by prefix.
    case sessions(nick: String?, limit: Int)
    case bans
    /// Answered `.ban` with the ban in force.
    case ban(BanTarget, reason: String, by: String)
    /// Answered `.ban` with the lifted ban; lifting what is not banned is `bad_param`.
    case unban(BanTarget, by: String)
    case settings
    /// All or nothing: answered `.settings` with every stored setting.
    case changeSettings([String: Int], by: String)
    /// An action carried out elsewhere (room removal, expiry run) for the audit log.
    case audit(AuditEntry)
    case auditLog(limit: Int)
}

/// Rooms' part of administration (inside `RoomsCommand.admin`).
public enum RoomsAdminCommand: Codable, Sendable {
    /// Rooms whose topic contains `search` (or whose id it is), most recently
    /// visited first, with their visit times and membership counts.
    case list(search: String?, limit: Int)
    /// Removes a room now (never the lobby): memberships go with it, the
    /// `removed` event makes messaging delete its messages. Answered `.removed`.
    case remove(room: RoomID, by: String)
}

public enum AdminReply: Codable, Sendable {
    case token(AdminLogin)
    case identity(AdminIdentity)
    case unauthorized(String)
    case sessions([AdminSession])
    case bans([Ban])
    case ban(Ban)
    case settings([SettingValue])
    case audit([AuditEntry])
    case rooms([AdminRoom])
    case messageCounts([RoomMessageCount])
}

/// A successful login: the bearer token (shown once, stored only hashed) and its end.
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

    public init(
        id: Int64? = nil, atMs: Int64? = nil, actor: String, action: String, target: String, outcome: String,
        detail: String = "", gateway: String
    ) {
        self.id = id
        self.atMs = atMs
        self.actor = actor
        self.action = action
        self.target = target
        self.outcome = outcome
        self.detail = detail
        self.gateway = gateway
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
