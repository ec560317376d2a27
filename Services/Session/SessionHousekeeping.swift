import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Logging

/// Keeps `last_seen_at` current from the gateways' presence batches, and ends
/// sessions idle for longer than the session lifetime.
struct SessionHousekeeping: Sendable {
    let store: any SessionStore
    let outbox: OutboxRelay<StagedEvent>
    /// Read before every sweep: the live setting `session.lifetime.s`, else the configured value.
    let lifetimeSeconds: @Sendable () async -> Int
    let logger: Logger

    func recordPresence(from presence: KafkaConsumer) async {
        for await record in presence.records {
            if let batch = EventDecoding.decode(PresenceBatch.self, from: record) {
                await apply(batch)
            }
            presence.markProcessed(record)
        }
    }

    /// How fine liveness is kept in PostgreSQL: five minutes, or a quarter of a
    /// shorter session lifetime, so an idle session is still ended on time.
    static func granularityMs(lifetimeSeconds: Int) -> Int64 { min(300_000, Int64(lifetimeSeconds) * 1000 / 4) }

    func apply(_ batch: PresenceBatch) async {
        do {
            let granularity = Self.granularityMs(lifetimeSeconds: await lifetimeSeconds())
            try await store.touch(batch.sessions, seenAtMs: batch.seenAtMs, granularityMs: granularity)
        } catch {
            // Presence is advisory: a lost batch only makes a session look idle a little sooner.
            logger.warning("presence batch not recorded", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    func expireIdleSessions(every interval: Duration) async throws {
        while true {
            try await Task.sleep(for: interval)
            await expireIdleSessions()
        }
    }

    /// One sweep: ends idle sessions and announces each end.
    func expireIdleSessions() async {
        do {
            let ended = try await store.expireIdle(lifetimeSeconds: await lifetimeSeconds(), limit: 1000)
            await outbox.announceAndWait(ended.compactMap(\.event))
            if !ended.isEmpty { logger.info("idle sessions ended", metadata: ["count": "\(ended.count)"]) }
        } catch {
            logger.warning("idle session sweep failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
