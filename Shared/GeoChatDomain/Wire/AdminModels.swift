// The values administration commands carry and answer with (`AdminCommands.swift`).

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
