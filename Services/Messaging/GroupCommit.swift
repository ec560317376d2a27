import GeoChatBus
import GeoChatDomain
import Synchronization
import Tracing

/// Gathers the says that arrive while a transaction is under way and stores
/// them together in the next one: one commit (one WAL flush) for as many says
/// as came meanwhile, instead of one each (docs/architecture.md, "Group commit").
///
/// One transaction at a time per instance: a say waits at most for the one
/// running and its own. A batch holds at most one say per room and per
/// idempotency key (a room's ids stay in the order its says arrived; a key
/// repeated in one statement would not see itself); a second say of a room
/// waits for the next batch. The command processor runs one command per room
/// at a time, so that rarely happens. A batch that fails as a whole (a
/// deadline passed, a unique violation from a redelivery running on another
/// instance, PostgreSQL away) is run again say by say, each in its own
/// transaction, so every say gets the answer it would have had alone.
final class GroupCommit: Sendable {
    private struct Waiting {
        let say: NewMessage
        let answer: CheckedContinuation<Appended?, any Error>
        /// The say's trace context: its batch's statements are traced under the first say's.
        let trace: InstrumentationContext?
    }

    private struct State {
        var queue: [Waiting] = []
        var flushing = false
    }

    private let store: any MessageStore
    /// The most says in one transaction.
    let maxBatch: Int
    private let state = Mutex(State())

    init(store: any MessageStore, maxBatch: Int = 256) {
        self.store = store
        self.maxBatch = maxBatch
    }

    /// What `MessageStore.append` answers for this say, stored in a shared transaction.
    func append(_ say: NewMessage) async throws -> Appended? {
        try await withCheckedThrowingContinuation { answer in
            let leads = state.withLock { state in
                state.queue.append(Waiting(say: say, answer: answer, trace: InstrumentationContext.current))
                guard !state.flushing else { return false }
                state.flushing = true
                return true
            }
            if leads { Task { await flush() } }
        }
    }

    /// Stores batches until the queue is empty.
    private func flush() async {
        while true {
            let batch = state.withLock { state -> [Waiting] in
                let batch = Self.takeBatch(from: &state.queue, max: maxBatch)
                if batch.isEmpty { state.flushing = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            // The flushing task began under the say that found no transaction under way;
            // each batch is traced under its own first say instead.
            await InstrumentationContext.$current.withValue(batch[0].trace) { await commit(batch) }
        }
    }

    /// The first says of `queue`, at most one per room and per key, up to `max`; the rest stay in order.
    private static func takeBatch(from queue: inout [Waiting], max: Int) -> [Waiting] {
        var batch: [Waiting] = []
        var rest: [Waiting] = []
        var rooms = Set<RoomID>()
        var keys = Set<String>()
        for waiting in queue {
            if batch.count < max, rooms.insert(waiting.say.room).inserted {
                if keys.insert(waiting.say.key).inserted {
                    batch.append(waiting)
                    continue
                }
                rooms.remove(waiting.say.room)
            }
            rest.append(waiting)
        }
        queue = rest
        return batch
    }

    /// Every store call is bounded by the time its says have left: this task is
    /// no handler's, so no deadline cancels it, and a pool waiting for a
    /// PostgreSQL that went away would otherwise hold every later say of the
    /// instance behind it (seen in the fault harness: a restarted PostgreSQL,
    /// then no say stored for minutes).
    private func commit(_ batch: [Waiting]) async {
        do {
            let says = batch.map(\.say)
            let within = says.map { $0.commitBy.remaining() }.min() ?? .zero
            let answers = try await bounded(by: max(within, .zero)) { [store] in try await store.append(says) }
            for (waiting, answer) in zip(batch, answers) {
                waiting.answer.resume(with: answer.mapError { $0 as any Error })
            }
        } catch {
            guard batch.count > 1 else { return batch[0].answer.resume(throwing: error) }
            for waiting in batch {
                let say = waiting.say
                do {
                    waiting.answer.resume(
                        returning: try await bounded(by: max(say.commitBy.remaining(), .zero)) {
                            [store] in
                            try await store.append(
                                room: say.room, nick: say.nick, text: say.text, author: say.author, key: say.key,
                                commitBy: say.commitBy)
                        })
                } catch {
                    waiting.answer.resume(throwing: error)
                }
            }
        }
    }
}
