import Logging

/// Queries over a service's PostgreSQL: the pool and logger each one uses.
public protocol PostgresQueries: Sendable {
    var database: Database { get }
}

extension PostgresQueries {
    public var client: MeasuredPostgresClient { database.client }
    public var logger: Logger { database.logger }
}
