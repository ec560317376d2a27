import Logging
import PostgresNIO

/// What a store runs a statement on: a transaction's `TracedConnection`, or a
/// bare `PostgresConnection` (a leased connection, a migration's transaction).
/// Helpers that take either (the outbox's staging, advisory locks) take this.
public protocol PostgresStatements: Sendable {
    func query(_ query: PostgresQuery, logger: Logger, file: String, line: Int) async throws -> PostgresRowSequence
}

extension PostgresConnection: PostgresStatements {}
