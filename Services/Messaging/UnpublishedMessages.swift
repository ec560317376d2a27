import GeoChatDomain
import Logging
import Synchronization

/// Messages committed in PostgreSQL whose event the broker did not take. They
/// are offered again until it does, so every gateway learns of an acknowledged
/// message even when no later message of its room reveals the gap. Held in
/// memory: a process that dies with some here leaves them to the gap rule.
final class UnpublishedMessages: Sendable {
    private let pending = Mutex<[MessageStored]>([])
    /// While the broker is away for long, the oldest are dropped (the gap rule still finds them).
    static let capacity = 100_000

    func add(_ stored: MessageStored) {
        pending.withLock { queue in
            if queue.count >= Self.capacity { queue.removeFirst(queue.count - Self.capacity + 1) }
            queue.append(stored)
        }
    }

    var count: Int { pending.withLock { $0.count } }

    /// Publishes what is pending every `interval`, in order, until cancelled.
    func relay(
        every interval: Duration = .milliseconds(500), logger: Logger,
        publish: @Sendable (MessageStored) async throws -> Void
    ) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let batch = pending.withLock { queue in
                defer { queue.removeAll(keepingCapacity: true) }
                return queue
            }
            for (index, stored) in batch.enumerated() {
                do {
                    try await publish(stored)
                } catch {
                    // Still away: keep the rest, in order, ahead of anything newer.
                    pending.withLock { $0.insert(contentsOf: batch[index...], at: 0) }
                    break
                }
                if index == batch.count - 1 {
                    logger.info("late message events published", metadata: ["count": "\(batch.count)"])
                }
            }
        }
    }
}
