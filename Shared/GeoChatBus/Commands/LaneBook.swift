import GeoChatKafka
import Synchronization

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
