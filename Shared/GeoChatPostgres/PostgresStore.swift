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
