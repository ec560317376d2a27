import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatPostgres
import PostgresNIO

/// The session service's tables (schema `session`) and every query on them.
struct PostgresSessionStore: SessionStore, PostgresStore {
    let database: Database

    static let schema: StaticString = "session"
    static let migrations =
        [
            Migration(
                1, "sessions",
                [
                    """
                    CREATE TABLE session.sessions (
                        id text PRIMARY KEY,
                        nick text NOT NULL,
                        version bigint NOT NULL DEFAULT 1,
                        start_key text NOT NULL UNIQUE,
                        end_key text,
                        created_at timestamptz NOT NULL DEFAULT now(),
                        last_seen_at timestamptz NOT NULL DEFAULT now(),
                        ended_at timestamptz,
                        end_reason text)
                    """,
                    "CREATE INDEX sessions_idle ON session.sessions (last_seen_at) WHERE ended_at IS NULL",
                ])
        ] + AdminStore.migrations + [
            Migration(3, "the outbox of session events", PostgresEventOutbox.tableStatements),
            AdminStore.auditFilters,
            AdminStore.auditSources,
        ]

    static let service = "session"
    var outbox: any Outbox<StagedEvent> { PostgresEventOutbox(database: database, service: Self.service) }

    /// The change's statements and its event's row, in one transaction.
    private func announcing<Value: Sendable>(
        _ change: (TracedConnection) async throws -> (Value, SessionEvent)?
    ) async throws -> Announced<Value>? {
        try await client.withTransaction(logger: logger) { tx -> Announced<Value>? in
            guard let (value, event) = try await change(tx) else { return nil }
            let staged = try await PostgresEventOutbox.stage(
                try EncodedEvent(event), service: Self.service, on: tx, logger: logger)
            return Announced(value, event: staged)
        }
    }

    /// Starts a session; a retry with the same key returns the session made the first time.
    func start(nick: Nickname, key: String) async throws -> Announced<SessionInfo> {
        let id = SessionID.random()
        let started = try await announcing { tx -> (SessionInfo, SessionEvent)? in
            let inserted = try await tx.query(
                """
                INSERT INTO session.sessions (id, nick, start_key) VALUES (\(id.value), \(nick.value), \(key))
                ON CONFLICT (start_key) DO NOTHING
                RETURNING id, nick, version
                """, logger: logger)
            for try await row in inserted.decode((String, String, Int64).self) {
                let info = SessionInfo(id: SessionID(row.0)!, nick: row.1, version: row.2)
                return (info, .started(info))
            }
            return nil
        }
        if let started { return started }
        let existing = try await client.query(
            "SELECT id, nick, version, ended_at IS NOT NULL FROM session.sessions WHERE start_key = \(key)",
            logger: logger)
        for try await row in existing.decode((String, String, Int64, Bool).self) {
            return Announced(SessionInfo(id: SessionID(row.0)!, nick: row.1, version: row.2, ended: row.3), event: nil)
        }
        throw ProtocolError.unavailable
    }

    func find(_ id: SessionID) async throws -> SessionInfo? {
        let rows = try await client.query(
            "SELECT nick, version, ended_at IS NOT NULL FROM session.sessions WHERE id = \(id.value)", logger: logger)
        for try await row in rows.decode((String, Int64, Bool).self) {
            return SessionInfo(id: id, nick: row.0, version: row.1, ended: row.2)
        }
        return nil
    }

    func rename(_ id: SessionID, to nick: Nickname) async throws -> Announced<SessionInfo>? {
        try await announcing { tx -> (SessionInfo, SessionEvent)? in
            let rows = try await tx.query(
                """
                UPDATE session.sessions SET nick = \(nick.value), version = version + 1, last_seen_at = now()
                WHERE id = \(id.value) AND ended_at IS NULL
                RETURNING version
                """, logger: logger)
            for try await version in rows.decode(Int64.self) {
                let info = SessionInfo(id: id, nick: nick.value, version: version)
                return (info, .renamed(info))
            }
            return nil
        }
    }

    /// Ends a session. A retry of the same `end` (same key) answers the ended
    /// session again (no event: the first one staged it); any other `end` of an
    /// ended session finds nothing.
    func end(_ id: SessionID, key: String) async throws -> Announced<SessionInfo>? {
        let ended = try await announcing { tx -> (SessionInfo, SessionEvent)? in
            let rows = try await tx.query(
                """
                UPDATE session.sessions SET ended_at = now(), end_reason = 'end', end_key = \(key), version = version + 1
                WHERE id = \(id.value) AND ended_at IS NULL
                RETURNING nick, version
                """, logger: logger)
            for try await row in rows.decode((String, Int64).self) {
                let info = SessionInfo(id: id, nick: row.0, version: row.1, ended: true)
                return (info, .ended(info, reason: "end"))
            }
            return nil
        }
        if let ended { return ended }
        let again = try await client.query(
            "SELECT nick, version FROM session.sessions WHERE id = \(id.value) AND end_key = \(key)", logger: logger)
        for try await row in again.decode((String, Int64).self) {
            return Announced(SessionInfo(id: id, nick: row.0, version: row.1, ended: true), event: nil)
        }
        return nil
    }

    /// Records signs of life seen by gateways (never moves time backwards).
    func touch(_ ids: [SessionID], seenAtMs: Int64, granularityMs: Int64) async throws {
        guard !ids.isEmpty else { return }
        let seen = WallClock.date(seenAtMs)
        let stale = WallClock.date(seenAtMs - granularityMs)
        try await client.query(
            """
            UPDATE session.sessions SET last_seen_at = \(seen)
            WHERE id = ANY(\(ids.map(\.value))) AND ended_at IS NULL AND last_seen_at < \(stale)
            """, logger: logger)
    }

    /// Ends up to `limit` sessions idle for longer than `lifetime`. Instances
    /// running this at once each take different rows (SKIP LOCKED).
    func expireIdle(lifetimeSeconds: Int, limit: Int) async throws -> [Announced<SessionInfo>] {
        let cutoff = Date(timeIntervalSinceNow: -Double(lifetimeSeconds))
        return try await client.withTransaction(logger: logger) { tx in
            let rows = try await tx.query(
                """
                UPDATE session.sessions SET ended_at = now(), end_reason = 'idle', version = version + 1
                WHERE id IN (
                    SELECT id FROM session.sessions
                    WHERE ended_at IS NULL AND last_seen_at < \(cutoff)
                    ORDER BY last_seen_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING id, nick, version
                """, logger: logger)
            var ended: [SessionInfo] = []
            for try await row in rows.decode((String, String, Int64).self) {
                ended.append(SessionInfo(id: SessionID(row.0)!, nick: row.1, version: row.2, ended: true))
            }
            let staged = try await PostgresEventOutbox.stage(
                try ended.map { try EncodedEvent(SessionEvent.ended($0, reason: "idle")) }, service: Self.service,
                on: tx, logger: logger)
            return zip(ended, staged).map { Announced($0, event: $1) }
        }
    }
}
