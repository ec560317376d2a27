import GeoChatKafka
import Synchronization

/// Runs the records of one key in offset order, and records of different keys
/// side by side, and tells when a partition's offsets may be committed.
///
/// Order matters only per key: a room's messages must be stored and published
/// in id order, a session's commands applied in turn. Nothing may rely on the
/// order of two keys, since keys hash to partitions arbitrarily; so a say in one
/// room no longer waits for the says of every room that shares its partition,
/// and an instance's concurrency is bounded by its work (`maxInFlight`), not by
/// how many partitions it holds (a second instance adds capacity).
///
/// Records finish out of order, but a partition's offset is committed only up
/// to the last record whose predecessors all finished (`committable`), so a
/// crash still replays everything unfinished: at-least-once is unchanged.
struct KeyLanes: Sendable {
    /// Records read but not finished, over all lanes: bounds memory and how far
    /// reading runs ahead while the lanes are busy.
    let maxInFlight: Int

    /// Reads with `next` until it returns nil, then lets the lanes finish what they
    /// hold. `committable` gets, in offset order per partition, the record up to
    /// which that partition is done; it must be quick (it runs under a lock).
    func run(
        next: () async -> KafkaRecord?,
        _ process: @escaping @Sendable (KafkaRecord) async -> Void,
        committable: @escaping @Sendable (KafkaRecord) -> Void = { _ in }
    ) async {
        let book = LaneBook()
        // Discarding: a lane's task is freed when it ends (a plain task group keeps
        // every finished child until it is awaited, and these run for the process's life).
        await withDiscardingTaskGroup { group in
            while let record = await next() {
                while !book.tryEnter(limit: maxInFlight) {
                    if Task.isCancelled { break }
                    // Every slot is taken: wait for a record to finish.
                    try? await Task.sleep(for: .milliseconds(1))
                }
                guard book.enqueue(record) else { continue }  // its lane is running and will take it
                let lane = LaneBook.Lane(record)
                group.addTask {
                    // Drains the lane, then ends: idle keys hold no task.
                    var current: KafkaRecord? = record
                    while let record = current {
                        await process(record)
                        current = book.finish(record, lane: lane, committable: committable)
                    }
                }
            }
        }
    }
}
