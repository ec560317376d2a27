import Synchronization
import Tracing

/// Gathers the items that arrive while a batch is being stored and stores them
/// together in the next one: one batch at a time per instance, each caller
/// answered with its own item's result. So a commit is shared by as many items
/// as came meanwhile (a say's message, a sayer's join), and an item waits at
/// most for the batch under way and its own.
///
/// The queue, the one task that drains it and the hand-back are here; what an
/// owner decides stays with it: which queued items may share the next batch
/// (`next`: the first `max` by default) and how a batch is stored (`store`,
/// which answers every item, in order). A batch is traced under its first
/// item's trace context.
public final class Batcher<Item: Sendable, Answer: Sendable>: Sendable {
    public typealias Select = @Sendable (_ queued: [Item]) -> [Int]
    public typealias Store = @Sendable (_ batch: [Item]) async -> [Result<Answer, any Error>]

    private struct Waiting {
        let item: Item
        let answer: CheckedContinuation<Answer, any Error>
        let trace: InstrumentationContext?
    }

    private struct State {
        var queue: [Waiting] = []
        var storing = false
    }

    private let next: Select
    private let store: Store
    private let state = Mutex(State())

    /// `next` answers the indices (ascending) of the queued items that go in
    /// the next batch, at least the first; the others stay queued in order.
    public init(next: @escaping Select, store: @escaping Store) {
        self.next = next
        self.store = store
    }

    /// Batches of the first `max` queued items.
    public convenience init(max: Int, store: @escaping Store) {
        self.init(next: { Array($0.indices.prefix(max)) }, store: store)
    }

    /// The item's answer, once the batch it went into is stored.
    public func submit(_ item: Item) async throws -> Answer {
        try await withCheckedThrowingContinuation { answer in
            let leads = state.withLock { state in
                state.queue.append(Waiting(item: item, answer: answer, trace: InstrumentationContext.current))
                guard !state.storing else { return false }
                state.storing = true
                return true
            }
            if leads { Task { await drain() } }
        }
    }

    /// Stores batches until the queue is empty.
    private func drain() async {
        while true {
            let batch = state.withLock { state -> [Waiting] in
                var chosen = state.queue.isEmpty ? [] : next(state.queue.map(\.item))
                if chosen.isEmpty && !state.queue.isEmpty { chosen = [0] }  // never stall on a selection of none
                let batch = chosen.map { state.queue[$0] }
                for index in chosen.reversed() { state.queue.remove(at: index) }
                if batch.isEmpty { state.storing = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            // The draining task began under the item that found no batch under way;
            // each batch is traced under its own first item instead.
            let answers = await InstrumentationContext.$current.withValue(batch[0].trace) {
                await store(batch.map(\.item))
            }
            for (index, waiting) in batch.enumerated() {
                waiting.answer.resume(with: index < answers.count ? answers[index] : .failure(CancellationError()))
            }
        }
    }
}
