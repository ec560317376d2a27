import Synchronization
import Testing

@testable import GeoChatBus

/// The queue-and-lead shape group commit and the sayers' joins share.
@Suite struct BatcherTests {
    /// Items that arrive while a batch is stored go together into the next one,
    /// and each caller gets its own item's answer.
    @Test func itemsArrivingMeanwhileShareTheNextBatch() async throws {
        let batches = Mutex<[[Int]]>([])
        let gate = AsyncStream<Void>.makeStream()
        let batcher = Batcher<Int, Int>(max: 100) { items in
            let first = batches.withLock {
                $0.append(items)
                return $0.count == 1
            }
            if first { for await _ in gate.stream { break } }  // the first batch waits while others queue
            return items.map { .success($0 * 10) }
        }
        let first = Task { try await batcher.submit(1) }
        while batches.withLock({ $0.isEmpty }) { await Task.yield() }
        let rest = (2...6).map { n in Task { try await batcher.submit(n) } }
        try await Task.sleep(for: .milliseconds(50))
        gate.continuation.yield()
        #expect(try await first.value == 10)
        for (n, task) in zip(2...6, rest) { #expect(try await task.value == n * 10) }
        #expect(batches.withLock { $0.count } == 2)
        #expect(batches.withLock { Set($0[1]) } == Set(2...6))
    }

    /// The owner's selection decides what shares a batch; the others wait, in order.
    @Test func whatTheSelectionLeavesWaitsForTheNextBatch() async throws {
        let batches = Mutex<[[String]]>([])
        let gate = AsyncStream<Void>.makeStream()
        // One item per first letter in a batch.
        let batcher = Batcher<String, String>(
            next: { queued in
                var letters = Set<Character>()
                return queued.indices.filter { letters.insert(queued[$0].first!).inserted }
            },
            store: { items in
                let first = batches.withLock {
                    $0.append(items)
                    return $0.count == 1
                }
                if first { for await _ in gate.stream { break } }
                return items.map { .success($0.uppercased()) }
            })
        let lead = Task { try await batcher.submit("x0") }
        while batches.withLock({ $0.isEmpty }) { await Task.yield() }
        var queued: [Task<String, any Error>] = []
        for word in ["a1", "a2", "b1", "a3"] {
            queued.append(Task { try await batcher.submit(word) })
            try await Task.sleep(for: .milliseconds(10))  // queued in this order
        }
        gate.continuation.yield()
        #expect(try await lead.value == "X0")
        #expect(try await queued.asyncMap { try await $0.value } == ["A1", "A2", "B1", "A3"])
        #expect(batches.withLock { $0 } == [["x0"], ["a1", "b1"], ["a2"], ["a3"]])
    }

    @Test func aFailedBatchAnswersEachItemWithItsError() async throws {
        struct Refused: Error {}
        let batcher = Batcher<Int, Int>(max: 10) { items in items.map { _ in .failure(Refused()) } }
        await #expect(throws: Refused.self) { try await batcher.submit(1) }
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var mapped: [T] = []
        for element in self { mapped.append(try await transform(element)) }
        return mapped
    }
}
