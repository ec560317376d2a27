import GeoChatBus
import GeoChatDomain
import Logging
import Synchronization

/// Stores the sayers' joins (`JoinBySaying`, one per say) that arrive while a
/// statement is under way together in the next one: one transaction for as
/// many joins as came meanwhile, where each was a transaction of its own (and
/// the rooms service's commits the largest PostgreSQL cost of a say:
/// docs/benchmarks.md, "Writes and idle on the dev broker"). One statement at
/// a time per instance. A join returns once its batch is committed, so a
/// `participants` of its room, handled after it in the room's order, sees it.
/// The `joined` events of new members are announced after the commit.
final class SayerJoins: Sendable {
    private struct Waiting {
        let sayer: Sayer
        let done: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var queue: [Waiting] = []
        var storing = false
    }

    private let store: any RoomStore
    private let outbox: OutboxRelay<StagedEvent>
    private let logger: Logger
    /// The most joins in one statement.
    let maxBatch: Int
    /// Tries of a batch while PostgreSQL is away, `retryPause` apart: a join is
    /// posted one way, so nobody would try it again.
    let tries: Int
    let retryPause: Duration
    private let state = Mutex(State())

    init(
        store: any RoomStore, outbox: OutboxRelay<StagedEvent>, logger: Logger, maxBatch: Int = 512, tries: Int = 20,
        retryPause: Duration = .milliseconds(250)
    ) {
        self.store = store
        self.outbox = outbox
        self.logger = logger
        self.maxBatch = maxBatch
        self.tries = tries
        self.retryPause = retryPause
    }

    /// Made a member (or its membership renewed) and its room visited, in a shared transaction.
    func join(_ sayer: Sayer) async throws {
        try await withCheckedThrowingContinuation { done in
            let leads = state.withLock { state in
                state.queue.append(Waiting(sayer: sayer, done: done))
                guard !state.storing else { return false }
                state.storing = true
                return true
            }
            if leads { Task { await storeAll() } }
        }
    }

    private func storeAll() async {
        while true {
            let batch = state.withLock { state -> [Waiting] in
                let batch = Array(state.queue.prefix(maxBatch))
                state.queue.removeFirst(batch.count)
                if batch.isEmpty { state.storing = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            await commit(batch)
        }
    }

    private func commit(_ batch: [Waiting]) async {
        var failure: (any Error)?
        for attempt in 1...tries {
            do {
                for event in try await store.sayersJoined(batch.map(\.sayer)) { outbox.announce(event) }
                for waiting in batch { waiting.done.resume() }
                return
            } catch {
                failure = error
                if attempt == 1 {
                    logger.warning(
                        "sayers' joins not stored yet, retrying",
                        metadata: ["joins": "\(batch.count)", "error": "\(String(reflecting: error))"])
                }
                if attempt < tries { try? await Task.sleep(for: retryPause) }
            }
        }
        logger.error("sayers' joins dropped after retries", metadata: ["joins": "\(batch.count)"])
        for waiting in batch { waiting.done.resume(throwing: failure ?? CancellationError()) }
    }
}
