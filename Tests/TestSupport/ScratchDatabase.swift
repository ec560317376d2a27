import Foundation
import GeoChatPostgres
import Logging
import PostgresNIO

/// A database of a test's own on the test PostgreSQL (`GEOCHAT_TEST_PG_PORT`,
/// started by deploy/test.sh): made empty for the test, its pool running while
/// the test body runs, dropped afterwards. Stores migrate it as a service would.
public enum ScratchDatabase {
    /// The test PostgreSQL's port, or nil when none is configured (a local `swift test`).
    /// Under CI a missing one is a failure, not a skip: the tests that need it must run.
    public static var port: Int? {
        ProcessInfo.processInfo.environment["GEOCHAT_TEST_PG_PORT"].flatMap(Int.init)
    }

    public static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"] != nil }

    /// The CA of the test PostgreSQL's certificate (`GEOCHAT_TEST_PG_CA`, made by
    /// deploy/test.sh): scratch databases are then reached with `verify-full`, as services reach theirs.
    public static var certificateAuthority: String? { ProcessInfo.processInfo.environment["GEOCHAT_TEST_PG_CA"] }

    /// The test PostgreSQL's password (`GEOCHAT_TEST_PG_PASSWORD_FILE`, made by deploy/lib.sh's `pg_start`).
    static var password: String? {
        guard let file = ProcessInfo.processInfo.environment["GEOCHAT_TEST_PG_PASSWORD_FILE"],
            let text = try? String(contentsOfFile: file, encoding: .utf8)
        else { return nil }
        return text.split(whereSeparator: \.isNewline).first.map(String.init)
    }

    public struct NotConfigured: Error, CustomStringConvertible {
        public var description: String {
            "GEOCHAT_TEST_PG_PORT is not set (deploy/test.sh starts a PostgreSQL for the unit tests)"
        }
    }

    public static func with<T: Sendable>(_ body: @Sendable (Database) async throws -> T) async throws -> T {
        guard let port else { throw NotConfigured() }
        let logger = Logger(label: "scratch-database")
        let name = "test_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try Database(settings: settings(port: port, database: "postgres"), logger: logger)
        return try await running(admin) {
            try await admin.client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
            let database = try Database(settings: settings(port: port, database: name), logger: logger)
            let drop = PostgresQuery(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)")
            do {
                let value = try await running(database) { try await body(database) }
                try await admin.client.query(drop, logger: logger)
                return value
            } catch {
                _ = try? await admin.client.query(drop, logger: logger)
                throw error
            }
        }
    }

    public static func settings(port: Int, database: String) -> PostgresSettings {
        PostgresSettings(
            host: "127.0.0.1", port: port, user: "postgres", password: password, database: database, maxConnections: 4,
            tlsMode: certificateAuthority == nil ? .disable : .verifyFull, rootCertificatePath: certificateAuthority)
    }

    /// Runs `body` while the database's pool runs.
    public static func running<T: Sendable>(_ database: Database, _ body: @Sendable () async throws -> T) async throws
        -> T
    {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await database.run()
                return nil
            }
            defer { group.cancelAll() }
            let value = try await body()
            return value
        }
    }
}
