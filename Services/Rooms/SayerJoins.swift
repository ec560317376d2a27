import GeoChatBus
import GeoChatDomain
import Logging

/// Stores the sayers' joins (`JoinBySaying`, one per say) that arrive while a
/// statement is under way together in the next one: one transaction for as
/// many joins as came meanwhile, where each was a transaction of its own (and
/// the rooms service's commits the largest PostgreSQL cost of a say:
/// docs/benchmarks.md, "Writes and idle on the dev broker"). One statement at
/// a time per instance. A join returns once its batch is committed, so a
/// `participants` of its room, handled after it in the room's order, sees it.
/// The `joined` events of new members are announced after the commit.
final class SayerJoins: Sendable {
    private let batcher: Batcher<Sayer, Void>

    /// `maxBatch`: the most joins in one statement; `tries` of a batch while PostgreSQL is away, `retryPause` apart: a join
    /// is posted one way, so nobody would try it again.
    init(
        store: any RoomStore, outbox: OutboxRelay<StagedEvent>, logger: Logger, maxBatch: Int = 512, tries: Int = 20,
        retryPause: Duration = .milliseconds(250)
    ) {
        batcher = Batcher(max: maxBatch) { sayers in
            var failure: any Error = CancellationError()
            for attempt in 1...tries {
                do {
                    for event in try await store.sayersJoined(sayers) { outbox.announce(event) }
                    return sayers.map { _ in .success(()) }
                } catch {
                    failure = error
                    if attempt == 1 {
                        logger.warning(
                            "sayers' joins not stored yet, retrying",
                            metadata: ["joins": "\(sayers.count)", "error": "\(String(reflecting: error))"])
                    }
                    if attempt < tries { try? await Task.sleep(for: retryPause) }
                }
            }
            logger.error("sayers' joins dropped after retries", metadata: ["joins": "\(sayers.count)"])
            return sayers.map { _ in .failure(failure) }
        }
    }

    /// Made a member (or its membership renewed) and its room visited, in a shared transaction.
    func join(_ sayer: Sayer) async throws { try await batcher.submit(sayer) }
}
