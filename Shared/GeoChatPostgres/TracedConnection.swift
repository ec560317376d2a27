import Logging
import PostgresNIO
import Tracing

/// A transaction's connection, as `MeasuredPostgresClient.withTransaction`
/// hands it to a store: each statement is a client span under the
/// transaction's (`PostgresSpans`). The store's code is the same as on a bare
/// `PostgresConnection`: `tx.query(…, logger: logger)`.
public struct TracedConnection: PostgresStatements {
    /// The connection itself, for what `query` does not cover.
    public let connection: PostgresConnection
    let databaseName: String?
    /// The transaction's span context: the statements' parent.
    let transaction: InstrumentationContext

    @discardableResult
    public func query(
        _ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> PostgresRowSequence {
        let span = PostgresSpans.start(
            "query", statement: query.sql, database: databaseName, file: file, line: line, parent: transaction)
        defer { span.end() }
        do {
            return try await connection.query(query, logger: logger, file: file, line: line)
        } catch {
            PostgresSpans.failed(span, error)
            throw error
        }
    }
}

/// What a store runs a statement on: a transaction's `TracedConnection`, or a
/// bare `PostgresConnection` (a leased connection, a migration's transaction).
/// Helpers that take either (the outbox's staging, advisory locks) take this.
public protocol PostgresStatements: Sendable {
    func query(_ query: PostgresQuery, logger: Logger, file: String, line: Int) async throws -> PostgresRowSequence
}

extension PostgresConnection: PostgresStatements {}
