import Synchronization
import XCTest

@testable import GeoChatKafka

/// Commands of one partition keep their order; partitions are worked on side by side.
final class PartitionLanesTests: XCTestCase {
    /// Runs `records` through lanes whose work takes 2 ms; returns the most records
    /// worked on at once and the offsets seen per partition, in the order finished.
    func run(_ records: [KafkaRecord], maxInFlight: Int) async -> (mostAtOnce: Int, seen: [Int32: [Int64]]) {
        let (stream, feed) = AsyncStream.makeStream(of: KafkaRecord.self)
        for record in records { feed.yield(record) }
        feed.finish()
        let seen = Mutex<[Int32: [Int64]]>([:])
        let running = Atomic<Int>(0)
        let mostAtOnce = Atomic<Int>(0)
        var iterator = stream.makeAsyncIterator()
        await PartitionLanes(maxInFlight: maxInFlight).run(next: { await iterator.next() }) { record in
            let now = running.add(1, ordering: .acquiringAndReleasing).newValue
            _ = mostAtOnce.max(now, ordering: .acquiringAndReleasing)
            try? await Task.sleep(for: .milliseconds(2))
            seen.withLock { $0[record.partition, default: []].append(record.offset) }
            running.subtract(1, ordering: .acquiringAndReleasing)
        }
        return (mostAtOnce.load(ordering: .acquiring), seen.withLock { $0 })
    }

    static func record(partition: Int, offset: Int) -> KafkaRecord {
        KafkaRecord(topic: "t", partition: Int32(partition), offset: Int64(offset), key: nil, value: [])
    }

    func testOrderWithinPartitionsAndConcurrencyAcross() async {
        let records = (0..<20).flatMap { offset in (0..<4).map { Self.record(partition: $0, offset: offset) } }
        let (mostAtOnce, seen) = await run(records, maxInFlight: 16)
        XCTAssertEqual(seen.count, 4)
        for (partition, offsets) in seen {
            XCTAssertEqual(offsets, Array(0..<20), "partition \(partition) in order")
        }
        XCTAssertGreaterThan(mostAtOnce, 1, "partitions ran side by side")
        XCTAssertLessThanOrEqual(mostAtOnce, 4, "one record at a time per partition")
    }

    func testInFlightIsBounded() async {
        let records = (0..<30).map { Self.record(partition: $0 % 10, offset: $0) }
        let (mostAtOnce, seen) = await run(records, maxInFlight: 3)
        XCTAssertLessThanOrEqual(mostAtOnce, 3)
        XCTAssertEqual(seen.values.map(\.count).reduce(0, +), 30, "every record was worked on")
    }
}
