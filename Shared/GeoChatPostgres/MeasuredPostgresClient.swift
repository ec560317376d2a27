import GeoChatMetrics
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Tracing

/// The service's `PostgresClient` with metrics: PostgresNIO's pool has no public
/// hooks, so every query goes through these forwarding methods, which time it and
/// count the connections it holds. Same signatures as `PostgresClient`, so stores
/// call `client.query(...)` as before.
///
/// What is measured: `query` until PostgreSQL's first answer (the row description
/// or completion), which is when PostgresNIO returns the row stream — rows streamed
/// after that are not timed; `withTransaction` and `withConnection` for their whole
/// closure. "In use" counts those calls in flight, a close proxy for leased connections.
///
/// Traced here too (PostgresNIO makes no spans): each call is a client span,
/// child of the current one (a command's processing), with OpenTelemetry's
/// `db.*` attributes — the statement's text with its `$n` placeholders and the
/// store's file and line, never a bound value (`PostgresSpans`).
public struct MeasuredPostgresClient: Service, Sendable {
    /// The pool itself, for what the forwards below do not cover.
    public let pool: PostgresClient
    private let inUse = PoolUse()
    /// The database's name, for the spans' `db.namespace`.
    private let databaseName: String?

    private static let queryDuration = LabeledFamily(timer: MetricNames.pgQueryDuration, label: "kind")
    private static let queryErrors = LabeledFamily(counter: MetricNames.pgQueryErrors, label: "kind")

    init(pool: PostgresClient, maxConnections: Int, databaseName: String? = nil) {
        self.pool = pool
        self.databaseName = databaseName
        Gauge(label: MetricNames.pgPoolSize).record(maxConnections)
    }

    public func run() async { await pool.run() }

    @discardableResult
    public func query(
        _ query: PostgresQuery, logger: Logger? = nil, file: String = #fileID, line: Int = #line
    ) async throws -> PostgresRowSequence {
        try await measured("query", statement: query.sql, file: file, line: line) { _ in
            try await pool.query(query, logger: logger, file: file, line: line)
        }
    }

    public func withConnection<Result>(
        isolation: isolated (any Actor)? = #isolation, file: String = #fileID, line: Int = #line,
        _ closure: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        try await measured("connection", statement: nil, file: file, line: line, isolation: isolation) { _ in
            try await pool.withConnection(isolation: isolation, closure)
        }
    }

    /// The closure's statements are traced one by one, under the transaction's span.
    public func withTransaction<Result>(
        logger: Logger, file: String = #fileID, line: Int = #line, isolation: isolated (any Actor)? = #isolation,
        _ closure: (TracedConnection) async throws -> sending Result
    ) async throws -> sending Result {
        try await measured("transaction", statement: nil, file: file, line: line, isolation: isolation) { span in
            try await pool.withTransaction(logger: logger, file: file, line: line, isolation: isolation) {
                connection in
                try await closure(
                    TracedConnection(connection: connection, databaseName: databaseName, transaction: span.context))
            }
        }
    }

    private func measured<Result>(
        _ kind: String, statement: String?, file: String, line: Int, isolation: isolated (any Actor)? = #isolation,
        _ body: (any Span) async throws -> sending Result
    ) async throws -> sending Result {
        let span = PostgresSpans.start(
            kind, statement: statement, database: databaseName, file: file, line: line)
        let started = ContinuousClock.now
        inUse.change(by: 1)
        defer {
            inUse.change(by: -1)
            Self.queryDuration[kind].record(since: started)
            span.end()
        }
        do {
            return try await body(span)
        } catch {
            Self.queryErrors[kind].increment()
            PostgresSpans.failed(span, error)
            throw error
        }
    }
}

/// Calls holding a connection right now, published as a gauge.
final class PoolUse: Sendable {
    private let count = Atomic<Int>(0)
    private let gauge = Gauge(label: MetricNames.pgConnectionsInUse)

    func change(by delta: Int) {
        let now = count.add(delta, ordering: .relaxed).newValue
        gauge.record(now)
    }
}
