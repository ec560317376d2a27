import Foundation
import GeoChatDomain
import GeoChatPostgres
import PostgresNIO

/// The administration tables of the session service (schema `session`): admin
/// accounts, their tokens, bans, settings and the audit log, and every query on them.
struct AdminStore: PostgresQueries {
    let database: Database

    /// Part of the session schema: appended to `PostgresSessionStore.migrations` (one version sequence).
    static let migrations = [
        Migration(
            2, "administration: admins, tokens, bans, settings, audit log",
            [
                """
                CREATE TABLE session.admins (
                    name text PRIMARY KEY,
                    password_hash text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    password_changed_at timestamptz NOT NULL DEFAULT now())
                """,
                """
                CREATE TABLE session.admin_tokens (
                    token_hash text PRIMARY KEY,
                    admin text NOT NULL REFERENCES session.admins (name) ON DELETE CASCADE,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    expires_at timestamptz NOT NULL,
                    revoked_at timestamptz)
                """,
                "CREATE INDEX admin_tokens_expiry ON session.admin_tokens (expires_at)",
                // Orders every change of a ban or a setting: readers keep the highest version.
                "CREATE SEQUENCE session.state_versions",
                """
                CREATE TABLE session.bans (
                    target_key text PRIMARY KEY,
                    kind text NOT NULL,
                    value text NOT NULL,
                    active boolean NOT NULL,
                    reason text NOT NULL,
                    by_admin text NOT NULL,
                    changed_at timestamptz NOT NULL DEFAULT now(),
                    version bigint NOT NULL)
                """,
                """
                CREATE TABLE session.settings (
                    name text PRIMARY KEY,
                    value bigint NOT NULL,
                    version bigint NOT NULL,
                    updated_by text NOT NULL,
                    updated_at timestamptz NOT NULL DEFAULT now())
                """,
                """
                CREATE TABLE session.audit_log (
                    id bigserial PRIMARY KEY,
                    at timestamptz NOT NULL DEFAULT now(),
                    actor text NOT NULL,
                    action text NOT NULL,
                    target text NOT NULL,
                    outcome text NOT NULL,
                    detail text NOT NULL DEFAULT '',
                    gateway text NOT NULL DEFAULT '')
                """,
                "CREATE INDEX audit_log_logins ON session.audit_log (target, at) WHERE action = 'login'",
            ])
    ]

    /// The audit log's pages filtered by who, what or how (`auditLog`): each
    /// filter walks its own index newest first instead of the whole table.
    static let auditFilters = Migration(
        4, "audit log filters",
        [
            "CREATE INDEX audit_log_actor ON session.audit_log (actor, id)",
            "CREATE INDEX audit_log_action ON session.audit_log (action, id)",
            "CREATE INDEX audit_log_outcome ON session.audit_log (outcome, id)",
        ])

    /// Where each row came from: failed logins count per name and source
    /// address (`recentLoginFailures`), so one address failing on purpose does
    /// not lock the name out for its admin elsewhere.
    static let auditSources = Migration(
        5, "audit log sources",
        [
            "ALTER TABLE session.audit_log ADD COLUMN source text NOT NULL DEFAULT ''",
            "CREATE INDEX audit_log_login_sources ON session.audit_log (target, source, at) WHERE action = 'login'",
        ])

    // MARK: accounts and tokens

    func passwordHash(of name: AdminName) async throws -> String? {
        let rows = try await client.query(
            "SELECT password_hash FROM session.admins WHERE name = \(name.value)", logger: logger)
        for try await hash in rows.decode(String.self) { return hash }
        return nil
    }

    func adminCount() async throws -> Int {
        let rows = try await client.query("SELECT count(*) FROM session.admins", logger: logger)
        for try await n in rows.decode(Int64.self) { return Int(n) }
        return 0
    }

    /// Creates the admin, or with `replace` sets a new password (and revokes its tokens).
    /// False when the name exists and `replace` is not given.
    func saveAdmin(_ name: AdminName, passwordHash: String, replace: Bool) async throws -> Bool {
        try await client.withTransaction(logger: logger) { tx in
            let rows: PostgresRowSequence
            if replace {
                rows = try await tx.query(
                    """
                    INSERT INTO session.admins (name, password_hash) VALUES (\(name.value), \(passwordHash))
                    ON CONFLICT (name) DO UPDATE SET password_hash = EXCLUDED.password_hash, password_changed_at = now()
                    RETURNING name
                    """, logger: logger)
                try await tx.query(
                    "UPDATE session.admin_tokens SET revoked_at = now() WHERE admin = \(name.value) AND revoked_at IS NULL",
                    logger: logger)
            } else {
                rows = try await tx.query(
                    """
                    INSERT INTO session.admins (name, password_hash) VALUES (\(name.value), \(passwordHash))
                    ON CONFLICT (name) DO NOTHING RETURNING name
                    """, logger: logger)
            }
            for try await _ in rows.decode(String.self) { return true }
            return false
        }
    }

    func issueToken(hash: String, admin: AdminName, lifetimeSeconds: Int) async throws -> Int64 {
        let expires = Date(timeIntervalSinceNow: Double(lifetimeSeconds))
        try await client.query(
            """
            INSERT INTO session.admin_tokens (token_hash, admin, expires_at)
            VALUES (\(hash), \(admin.value), \(expires))
            """, logger: logger)
        return WallClock.milliseconds(expires)
    }

    /// The admin behind a token that is neither expired nor revoked.
    func identity(tokenHash: String) async throws -> AdminIdentity? {
        let rows = try await client.query(
            """
            SELECT t.admin, t.expires_at FROM session.admin_tokens t JOIN session.admins a ON a.name = t.admin
            WHERE t.token_hash = \(tokenHash) AND t.revoked_at IS NULL AND t.expires_at > now()
            """, logger: logger)
        for try await (name, expires) in rows.decode((String, Date).self) {
            return AdminIdentity(name: name, expiresAtMs: WallClock.milliseconds(expires))
        }
        return nil
    }

    func revoke(tokenHash: String) async throws {
        try await client.query(
            "UPDATE session.admin_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE token_hash = \(tokenHash)",
            logger: logger)
    }

    /// Failed logins of one name from one source address in the last five
    /// minutes (the throttle counts them from the audit log).
    func recentLoginFailures(name: String, source: String) async throws -> Int {
        let rows = try await client.query(
            """
            SELECT count(*) FROM session.audit_log
            WHERE action = 'login' AND target = \(name) AND source = \(Self.clip(source)) AND outcome = 'denied'
              AND at > now() - interval '5 minutes'
            """, logger: logger)
        for try await n in rows.decode(Int64.self) { return Int(n) }
        return 0
    }

    // MARK: sessions

    func liveSessions(nickPrefix: String?, limit: Int) async throws -> [AdminSession] {
        let prefix = nickPrefix?.lowercased() ?? ""
        let rows = try await client.query(
            """
            SELECT id, nick, created_at, last_seen_at FROM session.sessions
            WHERE ended_at IS NULL AND starts_with(lower(nick), \(prefix))
            ORDER BY last_seen_at DESC LIMIT \(limit)
            """, logger: logger)
        var sessions: [AdminSession] = []
        for try await (id, nick, created, seen) in rows.decode((String, String, Date, Date).self) {
            sessions.append(
                AdminSession(
                    id: id, nick: nick, createdAtMs: WallClock.milliseconds(created),
                    lastSeenAtMs: WallClock.milliseconds(seen)))
        }
        return sessions
    }

    // MARK: bans

    func ban(_ target: BanTarget, reason: String, by: String, audit: AuditEntry) async throws -> Ban {
        try await client.withTransaction(logger: logger) { tx in
            let rows = try await tx.query(
                """
                INSERT INTO session.bans (target_key, kind, value, active, reason, by_admin, version)
                VALUES (\(target.key), \(target.kind.rawValue), \(target.value), true, \(reason), \(by),
                        nextval('session.state_versions'))
                ON CONFLICT (target_key) DO UPDATE SET active = true, value = EXCLUDED.value, reason = EXCLUDED.reason,
                    by_admin = EXCLUDED.by_admin, changed_at = now(), version = nextval('session.state_versions')
                RETURNING changed_at, version
                """, logger: logger)
            try await Self.insert(audit, tx, logger)
            for try await (at, version) in rows.decode((Date, Int64).self) {
                return Ban(
                    target: target, active: true, reason: reason, by: by, atMs: WallClock.milliseconds(at),
                    version: version)
            }
            throw ProtocolError.unavailable
        }
    }

    /// Nil when the target is not banned.
    func unban(_ target: BanTarget, by: String, audit: AuditEntry) async throws -> Ban? {
        try await client.withTransaction(logger: logger) { tx in
            let rows = try await tx.query(
                """
                UPDATE session.bans SET active = false, by_admin = \(by), changed_at = now(),
                    version = nextval('session.state_versions')
                WHERE target_key = \(target.key) AND active
                RETURNING value, reason, changed_at, version
                """, logger: logger)
            for try await (value, reason, at, version) in rows.decode((String, String, Date, Int64).self) {
                try await Self.insert(audit, tx, logger)
                let stored = BanTarget(kind: target.kind, value: value) ?? target
                return Ban(
                    target: stored, active: false, reason: reason, by: by, atMs: WallClock.milliseconds(at),
                    version: version)
            }
            return nil
        }
    }

    /// Every ban, lifted ones too (a reader that missed the lifting learns it).
    func allBans() async throws -> [Ban] {
        let rows = try await client.query(
            "SELECT kind, value, active, reason, by_admin, changed_at, version FROM session.bans ORDER BY version",
            logger: logger)
        var bans: [Ban] = []
        for try await (kind, value, active, reason, by, at, version) in rows.decode(
            (String, String, Bool, String, String, Date, Int64).self)
        {
            guard let kind = BanTarget.Kind(rawValue: kind), let target = BanTarget(kind: kind, value: value) else {
                continue
            }
            bans.append(
                Ban(
                    target: target, active: active, reason: reason, by: by, atMs: WallClock.milliseconds(at),
                    version: version))
        }
        return bans
    }

    // MARK: settings

    func settings() async throws -> [SettingValue] {
        let rows = try await client.query(
            "SELECT name, value, version, updated_by, updated_at FROM session.settings ORDER BY name", logger: logger)
        var settings: [SettingValue] = []
        for try await (name, value, version, by, at) in rows.decode((String, Int64, Int64, String, Date).self) {
            settings.append(
                SettingValue(
                    name: name, value: Int(value), version: version, updatedBy: by,
                    updatedAtMs: WallClock.milliseconds(at)))
        }
        return settings
    }

    func setting(_ name: SettingName) async throws -> Int? {
        let rows = try await client.query(
            "SELECT value FROM session.settings WHERE name = \(name.rawValue)", logger: logger)
        for try await value in rows.decode(Int64.self) { return Int(value) }
        return nil
    }

    /// Stores checked values in one transaction with the audit row; returns the changed records.
    func change(_ values: [SettingName: Int], by: String, audit: AuditEntry) async throws -> [SettingValue] {
        try await client.withTransaction(logger: logger) { tx in
            var changed: [SettingValue] = []
            for (name, value) in values.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                let rows = try await tx.query(
                    """
                    INSERT INTO session.settings (name, value, version, updated_by)
                    VALUES (\(name.rawValue), \(Int64(value)), nextval('session.state_versions'), \(by))
                    ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, version = EXCLUDED.version,
                        updated_by = EXCLUDED.updated_by, updated_at = now()
                    RETURNING version, updated_at
                    """, logger: logger)
                for try await (version, at) in rows.decode((Int64, Date).self) {
                    changed.append(
                        SettingValue(
                            name: name.rawValue, value: value, version: version, updatedBy: by,
                            updatedAtMs: WallClock.milliseconds(at)))
                }
            }
            try await Self.insert(audit, tx, logger)
            return changed
        }
    }

    // MARK: audit log

    func record(_ entry: AuditEntry) async throws {
        try await client.withConnection { connection in try await Self.insert(entry, connection, logger) }
    }

    /// Newest first: at most `limit` rows older than the row `before` (a page's
    /// last id: the next page), each filter an exact match.
    func auditLog(limit: Int, query: AuditQuery = AuditQuery()) async throws -> [AuditEntry] {
        let rows = try await client.query(
            """
            SELECT id, at, actor, action, target, outcome, detail, gateway, source FROM session.audit_log
            WHERE (\(query.before)::bigint IS NULL OR id < \(query.before)::bigint)
              AND (\(query.actor)::text IS NULL OR actor = \(query.actor)::text)
              AND (\(query.action)::text IS NULL OR action = \(query.action)::text)
              AND (\(query.outcome)::text IS NULL OR outcome = \(query.outcome)::text)
            ORDER BY id DESC LIMIT \(limit)
            """, logger: logger)
        var entries: [AuditEntry] = []
        for try await (id, at, actor, action, target, outcome, detail, gateway, source) in rows.decode(
            (Int64, Date, String, String, String, String, String, String, String).self)
        {
            entries.append(
                AuditEntry(
                    id: id, atMs: WallClock.milliseconds(at), actor: actor, action: action, target: target,
                    outcome: outcome,
                    detail: detail, gateway: gateway, source: source.isEmpty ? nil : source))
        }
        return entries
    }

    private static func insert(
        _ entry: AuditEntry, _ connection: some PostgresStatements, _ logger: Logger, file: String = #fileID,
        line: Int = #line
    ) async throws {
        _ = try await connection.query(
            """
            INSERT INTO session.audit_log (actor, action, target, outcome, detail, gateway, source)
            VALUES (\(clip(entry.actor)), \(clip(entry.action)), \(clip(entry.target)), \(clip(entry.outcome)),
                    \(clip(entry.detail, 1000)), \(clip(entry.gateway)), \(clip(entry.source ?? "")))
            """, logger: logger, file: file, line: line)
    }

    /// Audit fields may come from failed input: bounded so a row stays small.
    static func clip(_ text: String, _ limit: Int = 200) -> String { String(text.prefix(limit)) }
}
