import GeoChatMetrics
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The service's `PostgresClient` with metrics: PostgresNIO's pool has no public
/// hooks, so every query goes through these forwarding methods, which time it and
/// count the connections it holds. Same signatures as `PostgresClient`, so stores
/// call `client.query(...)` as before.
///
/// What is measured: `query` until PostgreSQL's first answer (the row description
/// or completion), which is when PostgresNIO returns the row stream — rows streamed
/// after that are not timed; `withTransaction` and `withConnection` for their whole
/// closure. "In use" counts those calls in flight, a close proxy for leased connections.
public struct MeasuredPostgresClient: Service, Sendable {
    /// The pool itself, for what the forwards below do not cover.
    public let pool: PostgresClient
    private let inUse = PoolUse()

    private static let queryDuration = LabeledFamily(timer: MetricNames.pgQueryDuration, label: "kind")
    private static let queryErrors = LabeledFamily(counter: MetricNames.pgQueryErrors, label: "kind")

    init(pool: PostgresClient, maxConnections: Int) {
        self.pool = pool
        Gauge(label: MetricNames.pgPoolSize).record(maxConnections)
    }

    public func run() async { await pool.run() }

    @discardableResult
    public func query(
        _ query: PostgresQuery, logger: Logger? = nil, file: String = #fileID, line: Int = #line
    ) async throws -> PostgresRowSequence {
        try await measured("query") { try await pool.query(query, logger: logger, file: file, line: line) }
    }

    public func withConnection<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ closure: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        try await measured("connection", isolation: isolation) {
            try await pool.withConnection(isolation: isolation, closure)
        }
    }

    public func withTransaction<Result>(
        logger: Logger, file: String = #file, line: Int = #line, isolation: isolated (any Actor)? = #isolation,
        _ closure: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        try await measured("transaction", isolation: isolation) {
            try await pool.withTransaction(logger: logger, file: file, line: line, isolation: isolation, closure)
        }
    }

    private func measured<Result>(
        _ kind: String, isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> sending Result
    ) async throws -> sending Result {
        let started = ContinuousClock.now
        inUse.change(by: 1)
        defer {
            inUse.change(by: -1)
            Self.queryDuration[kind].record(since: started)
        }
        do {
            return try await body()
        } catch {
            Self.queryErrors[kind].increment()
            throw error
        }
    }
}
