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

/// The lanes' shared state: each busy key's queue, each partition's progress.
final class LaneBook: Sendable {
    struct Lane: Hashable {
        let topic: String
        let partition: Int32
        /// Records without a key keep their partition's order among themselves.
        let key: [UInt8]?

        init(_ record: KafkaRecord) {
            topic = record.topic
            partition = record.partition
            key = record.key
        }
    }

    /// A partition of one generation of the topic (`KafkaRecord.generation`):
    /// offsets of two generations are unrelated. Lanes ignore the generation, so a
    /// key's records stay in order across a switch.
    struct PartitionName: Hashable {
        let topic: String
        let generation: Int64?
        let partition: Int32

        init(_ record: KafkaRecord) {
            topic = record.topic
            generation = record.generation
            partition = record.partition
        }
    }

    private struct State {
        /// Busy lanes: records waiting behind the one being worked on.
        var waiting: [Lane: [KafkaRecord]] = [:]
        var progress: [PartitionName: PartitionProgress] = [:]
        var inFlight = 0
    }

    private let state = Mutex(State())

    func tryEnter(limit: Int) -> Bool {
        state.withLock { state in
            guard state.inFlight < limit else { return false }
            state.inFlight += 1
            return true
        }
    }

    /// Records the record as begun; true when its lane was idle, so the caller
    /// starts a task for it, false when it waits behind the lane's running record.
    func enqueue(_ record: KafkaRecord) -> Bool {
        state.withLock { state in
            state.progress[PartitionName(record), default: PartitionProgress()]
                .begin(record)
            let lane = Lane(record)
            if state.waiting[lane] != nil {
                state.waiting[lane]!.append(record)
                return false
            }
            state.waiting[lane] = []
            return true
        }
    }

    /// Marks `record` finished, hands `committable` the record its partition is
    /// now done up to (if that advanced) and returns the lane's next record (nil:
    /// the lane is idle now). `committable` runs under the lock, so what it is
    /// handed only grows per partition even when lanes finish at the same time.
    func finish(
        _ record: KafkaRecord, lane: Lane, committable: (KafkaRecord) -> Void
    ) -> KafkaRecord? {
        state.withLock { state in
            state.inFlight -= 1
            if let done = state.progress[PartitionName(record)]?.finish(record) {
                committable(done)
            }
            guard var queue = state.waiting[lane], !queue.isEmpty else {
                state.waiting[lane] = nil
                return nil
            }
            let next = queue.removeFirst()
            state.waiting[lane] = queue
            return next
        }
    }
}

/// One partition's records begun and not yet all finished, in offset order.
struct PartitionProgress {
    private var begun: [Int64] = []
    private var head = 0
    private var finished: [Int64: KafkaRecord] = [:]

    mutating func begin(_ record: KafkaRecord) {
        if let last = begun.last, record.offset <= last {
            // Read again from an earlier offset (the partition came back after a
            // rebalance): what is still running from before counts no more; it is
            // redelivered with the rest.
            self = PartitionProgress()
        }
        begun.append(record.offset)
    }

    /// The record up to which every begun record has finished, when that moved.
    mutating func finish(_ record: KafkaRecord) -> KafkaRecord? {
        guard begun[head...].contains(record.offset) else { return nil }  // from before a rewind
        finished[record.offset] = record
        var done: KafkaRecord?
        while head < begun.count, let next = finished.removeValue(forKey: begun[head]) {
            done = next
            head += 1
        }
        if head > 1024 {  // drop what is behind us now and then
            begun.removeFirst(head)
            head = 0
        }
        return done
    }
}
