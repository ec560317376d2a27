import Synchronization

/// Runs records one at a time per partition, with partitions side by side.
///
/// Records of one partition share keys (a room, a session), and their order
/// matters: a room's messages must be stored and published in id order. Records
/// of different partitions are independent, so an instance holding eight
/// partitions works on up to eight commands at once instead of one, and a
/// command waiting on PostgreSQL or on a broker acknowledgement no longer holds
/// up every other partition. Offsets are still marked in order within each
/// partition, so at-least-once delivery is unchanged.
struct PartitionLanes: Sendable {
    /// Records read but not finished, over all lanes: bounds memory and how far
    /// reading runs ahead while the lanes are busy.
    let maxInFlight: Int

    /// Reads with `next` until it returns nil, then lets the lanes finish what they hold.
    func run(
        next: () async -> KafkaRecord?, _ process: @escaping @Sendable (KafkaRecord) async -> Void
    ) async {
        let inFlight = InFlightCount()
        await withTaskGroup(of: Void.self) { group in
            var lanes: [Lane: AsyncStream<KafkaRecord>.Continuation] = [:]
            while let record = await next() {
                while !inFlight.tryEnter(limit: maxInFlight) {
                    if Task.isCancelled { break }
                    // Every lane is busy: wait for one to finish a record.
                    try? await Task.sleep(for: .milliseconds(1))
                }
                let lane = Lane(topic: record.topic, partition: record.partition)
                if lanes[lane] == nil {
                    let (stream, continuation) = AsyncStream.makeStream(of: KafkaRecord.self)
                    lanes[lane] = continuation
                    group.addTask {
                        for await record in stream {
                            await process(record)
                            inFlight.leave()
                        }
                    }
                }
                lanes[lane]?.yield(record)
            }
            for continuation in lanes.values { continuation.finish() }
        }
    }

    private struct Lane: Hashable {
        let topic: String
        let partition: Int32
    }
}

final class InFlightCount: Sendable {
    private let count = Atomic<Int>(0)

    func tryEnter(limit: Int) -> Bool {
        var current = count.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = count.compareExchange(
                expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
        return false
    }

    func leave() { count.subtract(1, ordering: .acquiringAndReleasing) }
}
