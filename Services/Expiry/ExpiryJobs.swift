import Foundation
import GeoChatPostgres
import PostgresNIO

/// The expiry service's own table (schema `expiry`): one row per run.
struct ExpiryJobs: Sendable {
    let database: Database

    static let migrations = [
        Migration(
            1, "expiry job history",
            [
                """
                CREATE TABLE expiry.jobs (
                    id bigserial PRIMARY KEY,
                    trigger text NOT NULL,
                    dry_run boolean NOT NULL DEFAULT false,
                    idle_before timestamptz NOT NULL,
                    started_at timestamptz NOT NULL DEFAULT now(),
                    finished_at timestamptz,
                    status text NOT NULL DEFAULT 'running',
                    examined integer NOT NULL DEFAULT 0,
                    removed integer NOT NULL DEFAULT 0,
                    failed integer NOT NULL DEFAULT 0,
                    error text)
                """
            ])
    ]

    func migrate() async throws {
        try await database.migrateRetrying(schema: "expiry", migrations: Self.migrations)
    }

    struct Report: Sendable {
        var examined = 0
        var removed = 0
        var failed = 0
    }

    func begin(trigger: String, idleBefore: Date) async throws -> Int64 {
        let rows = try await database.client.query(
            "INSERT INTO expiry.jobs (trigger, idle_before) VALUES (\(trigger), \(idleBefore)) RETURNING id",
            logger: database.logger)
        for try await id in rows.decode(Int64.self) { return id }
        throw ProtocolError.unavailable
    }

    func finish(_ job: Int64, report: Report, status: String, error: String?) async throws {
        try await database.client.query(
            """
            UPDATE expiry.jobs SET finished_at = now(), status = \(status), examined = \(report.examined),
                removed = \(report.removed), failed = \(report.failed), error = \(error)
            WHERE id = \(job)
            """, logger: database.logger)
    }

    /// Runs `body` only if no other instance holds the expiry lock; false if one does.
    func exclusively(_ body: () async throws -> Void) async throws -> Bool {
        let key = Database.advisoryKey("geochat.expiry.run")
        return try await database.client.withConnection { connection in
            var locked = false
            for try await value in try await connection.query("SELECT pg_try_advisory_lock(\(key))", logger: database.logger)
                .decode(Bool.self)
            {
                locked = value
            }
            guard locked else { return false }
            do {
                try await body()
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(key))", logger: database.logger)
                throw error
            }
            _ = try await connection.query("SELECT pg_advisory_unlock(\(key))", logger: database.logger)
            return true
        }
    }
}
import GeoChatDomain
