import Logging

/// A store that owns a schema: its migrations, applied at start.
public protocol PostgresStore: PostgresQueries {
    /// The schema the migrations create and the queries name.
    static var schema: StaticString { get }
    static var migrations: [Migration] { get }
}

extension PostgresStore {
    /// Applies what is missing of `migrations` (several instances may start at once).
    public func migrate() async throws {
        try await database.migrateRetrying(schema: Self.schema, migrations: Self.migrations)
    }
}

/// Queries over a service's PostgreSQL: the pool and logger each one uses.
public protocol PostgresQueries: Sendable {
    var database: Database { get }
}

extension PostgresQueries {
    public var client: MeasuredPostgresClient { database.client }
    public var logger: Logger { database.logger }
}
