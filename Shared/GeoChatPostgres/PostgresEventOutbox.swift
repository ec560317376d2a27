import Foundation
import GeoChatBus
import PostgresNIO

/// The outbox of a service's state changes in PostgreSQL: `outbox.events`, a
/// row per event the broker has not acknowledged yet, written in the
/// transaction of the change it announces (`stage`), removed once the event is
/// out. One table for the services that stage events (session, rooms), each
/// row marked with its service; messaging has its own (`messaging.outbox`),
/// which names messages instead of copying them.
public struct PostgresEventOutbox: Outbox {
    public let database: Database
    /// The service whose rows these are: each relays only its own.
    public let service: String

    public init(database: Database, service: String) {
        self.database = database
        self.service = service
    }

    /// The table, for the migrations of every service that stages events
    /// (whichever runs first makes it; the others find it).
    public static let tableStatements: [StaticString] = [
        "CREATE SCHEMA IF NOT EXISTS outbox",
        """
        CREATE TABLE IF NOT EXISTS outbox.events (
            service text NOT NULL,
            seq bigserial NOT NULL,
            topic text NOT NULL,
            key text NOT NULL,
            value text NOT NULL,
            stored_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (service, seq))
        """,
    ]

    /// Stores the events on the transaction's connection; answers them staged, in order.
    public static func stage(
        _ records: [EncodedEvent], service: String, on connection: some PostgresStatements, logger: Logger
    ) async throws -> [StagedEvent] {
        guard !records.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            INSERT INTO outbox.events (service, topic, key, value)
            SELECT \(service), t, k, v FROM unnest(\(records.map(\.topic)), \(records.map(\.key)), \(records.map(\.value)))
                WITH ORDINALITY AS r(t, k, v, n)
            ORDER BY n
            RETURNING seq
            """, logger: logger, file: #fileID, line: #line)
        var seqs: [Int64] = []
        for try await seq in rows.decode(Int64.self) { seqs.append(seq) }
        // RETURNING follows the insertion order, which follows ORDER BY n.
        return zip(seqs.sorted(), records).map { StagedEvent(seq: $0, record: $1) }
    }

    /// One event (see `stage(_:service:on:logger:)`).
    public static func stage(
        _ record: EncodedEvent, service: String, on connection: some PostgresStatements, logger: Logger
    ) async throws -> StagedEvent {
        try await stage([record], service: service, on: connection, logger: logger)[0]
    }

    public func announced(_ entries: [Int64]) async throws {
        guard !entries.isEmpty else { return }
        try await database.client.query(
            "DELETE FROM outbox.events WHERE service = \(service) AND seq = ANY(\(entries))", logger: database.logger)
    }

    /// The pass holds a transaction-level advisory lock (one per service) while
    /// it publishes, so passes never overlap, whichever instances run them, and
    /// a lane's events leave in the order they were stored. An instance that
    /// dies mid-pass releases the lock with its connection; its rows are still
    /// there for the next pass.
    public func relayUnannounced(
        olderThan grace: Duration, limit: Int, publish: @Sendable ([StagedEvent]) async -> [Int64]
    ) async throws -> OutboxPass {
        let lock = Database.advisoryKey("geochat.outbox.\(service)")
        let logger = database.logger
        return try await database.client.withTransaction(logger: logger) { tx in
            guard try await Database.tryTransactionLock(lock, on: tx, logger: logger) else { return .notLeader }
            let graceSeconds = Double(grace.components.seconds) + Double(grace.components.attoseconds) / 1e18
            let rows = try await tx.query(
                """
                SELECT seq, topic, key, value FROM outbox.events
                WHERE service = \(service) AND stored_at < now() - make_interval(secs => \(graceSeconds))
                ORDER BY seq LIMIT \(limit)
                """, logger: logger)
            var due: [StagedEvent] = []
            for try await (seq, topic, key, value) in rows.decode((Int64, String, String, String).self) {
                due.append(StagedEvent(seq: seq, record: EncodedEvent(topic: topic, key: key, value: value)))
            }
            let published = due.isEmpty ? [] : await publish(due)
            if !published.isEmpty {
                try await tx.query(
                    "DELETE FROM outbox.events WHERE service = \(service) AND seq = ANY(\(published))", logger: logger)
            }
            var backlog = 0
            for try await n in try await tx.query(
                "SELECT count(*) FROM outbox.events WHERE service = \(service)", logger: logger
            ).decode(Int64.self) {
                backlog = Int(n)
            }
            return .relayed(published: published.count, failed: due.count - published.count, backlog: backlog)
        }
    }
}
