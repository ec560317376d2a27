import GeoChatKafka
import Synchronization

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
