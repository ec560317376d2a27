import Foundation
import GeoChatRuntime
import Logging
import PostgresNIO

/// A service's PostgreSQL: one `PostgresClient` pool, run as a lifecycle service.
public final class Database: Sendable {
    /// The pool, measured (see `MeasuredPostgresClient`).
    public let client: MeasuredPostgresClient
    public let logger: Logger

    /// Throws for settings that cannot work (an unreadable CA file).
    public init(settings: PostgresSettings, logger: Logger) throws {
        var configuration = PostgresClient.Configuration(
            host: settings.host, port: settings.port, username: settings.user, password: settings.password,
            database: settings.database, tls: try settings.tlsConfiguration().map { .require($0) } ?? .disable)
        if let timeout = settings.statementTimeoutMs {
            configuration.options.additionalStartupParameters.append(("statement_timeout", String(timeout)))
        }
        configuration.options.maximumConnections = settings.maxConnections
        configuration.options.minimumConnections = 1
        // Fail fast while PostgreSQL is away: requests answer 503 instead of hanging.
        configuration.options.connectTimeout = .seconds(2)
        configuration.options.keepAliveBehavior = .init(frequency: .seconds(10))
        self.client = MeasuredPostgresClient(
            pool: PostgresClient(configuration: configuration, backgroundLogger: logger),
            maxConnections: settings.maxConnections, databaseName: settings.database)
        self.logger = logger
    }

    /// Runs the pool until cancelled (put it in the service group).
    public func run() async { await client.run() }
}

extension ServiceHost {
    /// The service's PostgreSQL pool from its configuration (`pg.*`), run for the process's life.
    /// A configuration that cannot work stops the process with a clear line (exit 2).
    public mutating func database() throws -> Database {
        let database: Database
        do {
            database = try Database(settings: try PostgresSettings(configuration), logger: logger)
        } catch {
            logger.critical("configuration refused; not starting", metadata: ["error": "\(error)"])
            exit(2)
        }
        uses(database.client)
        return database
    }
}
