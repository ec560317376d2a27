import Logging
import PostgresNIO

/// One versioned schema change of a service. The statements are constants of the
/// service's source (DDL takes no parameters), never built from input.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let statements: [StaticString]

    public init(_ version: Int, _ name: String, _ statements: [StaticString]) {
        self.version = version
        self.name = name
        self.statements = statements
    }
}

extension Database {
    /// Applies the service's pending migrations in its own schema. Several
    /// instances may start at once: an advisory lock lets one apply while the
    /// others wait, then find nothing left to do.
    public func migrate(schema: StaticString, migrations: [Migration]) async throws {
        let lockKey = Self.advisoryKey("geochat.migrations.\(schema)")
        try await client.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(\(lockKey))", logger: logger)
            do {
                try await connection.query(
                    PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"), logger: logger)
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            CREATE TABLE IF NOT EXISTS \(schema).schema_migrations (
                                version integer PRIMARY KEY,
                                name text NOT NULL,
                                applied_at timestamptz NOT NULL DEFAULT now())
                            """), logger: logger)
                var applied = Set<Int>()
                for try await version in try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT version FROM \(schema).schema_migrations"), logger: logger
                ).decode(Int.self) {
                    applied.insert(version)
                }
                for migration in migrations.sorted(by: { $0.version < $1.version })
                where !applied.contains(migration.version) {
                    try await connection.withTransaction(logger: logger) { tx in
                        for statement in migration.statements {
                            try await tx.query(PostgresQuery(unsafeSQL: "\(statement)"), logger: logger)
                        }
                        try await tx.query(
                            PostgresQuery(
                                unsafeSQL: "INSERT INTO \(schema).schema_migrations (version, name) VALUES ($1, $2)",
                                binds: Self.binds(migration.version, migration.name)), logger: logger)
                    }
                    logger.info(
                        "migration applied",
                        metadata: [
                            "schema": "\(schema)", "version": "\(migration.version)", "name": "\(migration.name)",
                        ])
                }
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
                throw error
            }
            try await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
        }
    }

    /// Tries until PostgreSQL answers (it may start after us).
    public func migrateRetrying(schema: StaticString, migrations: [Migration]) async throws {
        var attempt = 0
        while true {
            do {
                return try await migrate(schema: schema, migrations: migrations)
            } catch {
                attempt += 1
                if attempt == 1 || attempt % 10 == 0 {
                    logger.warning(
                        "migrations not applied yet, retrying",
                        metadata: ["schema": "\(schema)", "error": "\(String(reflecting: error))"])
                }
                try await Task.sleep(for: .milliseconds(min(2000, 200 * attempt)))
            }
        }
    }

    static func binds(_ version: Int, _ name: String) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(version)
        binds.append(name)
        return binds
    }

    /// Takes the transaction-level advisory lock `key` if no one holds it
    /// (`pg_try_advisory_xact_lock`): held until the transaction ends, also when
    /// its connection dies. False: another transaction holds it.
    public static func tryTransactionLock(
        _ key: Int64, on connection: some PostgresStatements, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT pg_try_advisory_xact_lock(\(key))", logger: logger, file: file, line: line)
        for try await got in rows.decode(Bool.self) {
            return got
        }
        return false
    }

    /// A stable 63-bit key (FNV-1a) for `pg_advisory_lock`.
    public static func advisoryKey(_ name: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return Int64(bitPattern: hash >> 1)
    }
}
