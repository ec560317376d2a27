import Synchronization
import XCTest

@testable import GeoChatKafka

/// Commands of one partition keep their order; partitions are worked on side by side.
final class PartitionLanesTests: XCTestCase {
    func testOrderWithinPartitionsAndConcurrencyAcross() async {
        let (records, feed) = AsyncStream.makeStream(of: KafkaRecord.self)
        for offset in 0..<20 {
            for partition in 0..<4 {
                feed.yield(KafkaRecord(topic: "t", partition: Int32(partition), offset: Int64(offset), key: nil, value: []))
            }
        }
        feed.finish()
        let seen = Mutex<[Int32: [Int64]]>([:])
        let running = Atomic<Int>(0)
        let mostAtOnce = Atomic<Int>(0)
        var iterator = records.makeAsyncIterator()
        await PartitionLanes(maxInFlight: 16).run(next: { await iterator.next() }) { record in
            let now = running.add(1, ordering: .acquiringAndReleasing).newValue
            _ = mostAtOnce.max(now, ordering: .acquiringAndReleasing)
            try? await Task.sleep(for: .milliseconds(2))
            seen.withLock { $0[record.partition, default: []].append(record.offset) }
            running.subtract(1, ordering: .acquiringAndReleasing)
        }
        let byPartition = seen.withLock { $0 }
        XCTAssertEqual(byPartition.count, 4)
        for (partition, offsets) in byPartition {
            XCTAssertEqual(offsets, Array(0..<20), "partition \(partition) in order")
        }
        XCTAssertGreaterThan(mostAtOnce.load(ordering: .acquiring), 1, "partitions ran side by side")
        XCTAssertLessThanOrEqual(mostAtOnce.load(ordering: .acquiring), 4, "one record at a time per partition")
    }

    func testInFlightIsBounded() async {
        let (records, feed) = AsyncStream.makeStream(of: KafkaRecord.self)
        for offset in 0..<30 {
            feed.yield(KafkaRecord(topic: "t", partition: Int32(offset % 10), offset: Int64(offset), key: nil, value: []))
        }
        feed.finish()
        let running = Atomic<Int>(0)
        let mostAtOnce = Atomic<Int>(0)
        var iterator = records.makeAsyncIterator()
        await PartitionLanes(maxInFlight: 3).run(next: { await iterator.next() }) { _ in
            let now = running.add(1, ordering: .acquiringAndReleasing).newValue
            _ = mostAtOnce.max(now, ordering: .acquiringAndReleasing)
            try? await Task.sleep(for: .milliseconds(2))
            running.subtract(1, ordering: .acquiringAndReleasing)
        }
        XCTAssertLessThanOrEqual(mostAtOnce.load(ordering: .acquiring), 3)
    }
}
