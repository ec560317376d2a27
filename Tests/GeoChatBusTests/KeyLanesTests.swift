import Synchronization
import XCTest

import GeoChatKafka
@testable import GeoChatBus

/// Commands of one key keep their order; keys are worked on side by side; a
/// partition is committed only up to its first unfinished record.
final class KeyLanesTests: XCTestCase {
    struct Outcome {
        var mostAtOnce: Int
        /// Offsets per key, in the order finished.
        var seen: [String: [Int64]]
        /// Offsets handed to `committable`, per partition, in the order handed.
        var committed: [Int32: [Int64]]
    }

    /// Runs `records` through lanes whose work takes `workMs(record)`.
    func run(
        _ records: [KafkaRecord], maxInFlight: Int, workMs: @escaping @Sendable (KafkaRecord) -> Int = { _ in 2 }
    ) async -> Outcome {
        let (stream, feed) = AsyncStream.makeStream(of: KafkaRecord.self)
        for record in records { feed.yield(record) }
        feed.finish()
        let seen = Mutex<[String: [Int64]]>([:])
        let committed = Mutex<[Int32: [Int64]]>([:])
        let running = Atomic<Int>(0)
        let mostAtOnce = Atomic<Int>(0)
        var iterator = stream.makeAsyncIterator()
        await KeyLanes(maxInFlight: maxInFlight).run(
            next: { await iterator.next() },
            { record in
                let now = running.add(1, ordering: .acquiringAndReleasing).newValue
                _ = mostAtOnce.max(now, ordering: .acquiringAndReleasing)
                try? await Task.sleep(for: .milliseconds(workMs(record)))
                seen.withLock { $0[Self.name(record), default: []].append(record.offset) }
                running.subtract(1, ordering: .acquiringAndReleasing)
            },
            committable: { record in committed.withLock { $0[record.partition, default: []].append(record.offset) } })
        return Outcome(
            mostAtOnce: mostAtOnce.load(ordering: .acquiring), seen: seen.withLock { $0 },
            committed: committed.withLock { $0 })
    }

    static func name(_ record: KafkaRecord) -> String {
        "\(record.partition)/" + (record.key.map { String(decoding: $0, as: UTF8.self) } ?? "-")
    }

    static func record(partition: Int, offset: Int, key: String?) -> KafkaRecord {
        KafkaRecord(topic: "t", partition: Int32(partition), offset: Int64(offset), key: key.map { Array($0.utf8) }, value: [])
    }

    func testOrderWithinKeysAndConcurrencyAcrossKeysOfOnePartition() async {
        // One partition, four rooms, interleaved.
        let records = (0..<40).map { Self.record(partition: 0, offset: $0, key: "room-\($0 % 4)") }
        let outcome = await run(records, maxInFlight: 64)
        XCTAssertEqual(outcome.seen.count, 4)
        for (key, offsets) in outcome.seen {
            XCTAssertEqual(offsets, offsets.sorted(), "\(key) in order")
            XCTAssertEqual(offsets.count, 10)
        }
        XCTAssertGreaterThan(outcome.mostAtOnce, 1, "keys of one partition ran side by side")
        XCTAssertLessThanOrEqual(outcome.mostAtOnce, 4, "one record at a time per key")
        XCTAssertEqual(outcome.committed[0]?.last, 39, "the partition is committed to its end")
    }

    func testRecordsWithoutKeyKeepTheirPartitionOrder() async {
        let records = (0..<20).map { Self.record(partition: $0 % 2, offset: $0 / 2, key: nil) }
        let outcome = await run(records, maxInFlight: 64)
        XCTAssertEqual(outcome.seen["0/-"], Array(0..<10))
        XCTAssertEqual(outcome.seen["1/-"], Array(0..<10))
        XCTAssertLessThanOrEqual(outcome.mostAtOnce, 2)
    }

    func testCommitWaitsForTheFirstUnfinishedRecord() async {
        // Offset 0 (room a) is slow; offsets 1…9 (room b) finish long before it.
        let records = [Self.record(partition: 0, offset: 0, key: "a")]
            + (1..<10).map { Self.record(partition: 0, offset: $0, key: "b") }
        let outcome = await run(records, maxInFlight: 64) { $0.offset == 0 ? 200 : 1 }
        XCTAssertEqual(outcome.seen["0/b"], Array(1..<10), "b did not wait for a")
        // Nothing is committable until offset 0 is done; then everything at once.
        XCTAssertEqual(outcome.committed[0], [9])
    }

    func testCommittedOffsetsOnlyGrowAndReachTheEnd() async {
        let records = (0..<200).map { Self.record(partition: $0 % 3, offset: $0 / 3, key: "k\($0 % 7)") }
        let outcome = await run(records, maxInFlight: 32) { Int($0.offset % 3) }
        for (partition, offsets) in outcome.committed {
            XCTAssertEqual(offsets, offsets.sorted(), "partition \(partition) commits only grow")
            XCTAssertEqual(Set(offsets).count, offsets.count)
        }
        XCTAssertEqual(outcome.committed[0]?.last, 66)
        XCTAssertEqual(outcome.committed[1]?.last, 66)
        XCTAssertEqual(outcome.committed[2]?.last, 65)
    }

    func testInFlightIsBounded() async {
        let records = (0..<30).map { Self.record(partition: $0 % 10, offset: $0, key: "k\($0)") }
        let outcome = await run(records, maxInFlight: 3)
        XCTAssertLessThanOrEqual(outcome.mostAtOnce, 3)
        XCTAssertEqual(outcome.seen.values.map(\.count).reduce(0, +), 30, "every record was worked on")
    }

    func testAPartitionReadAgainFromAnEarlierOffsetStartsItsProgressOver() {
        var progress = PartitionProgress()
        let r = { (offset: Int) in Self.record(partition: 0, offset: offset, key: "k") }
        progress.begin(r(5))
        progress.begin(r(6))
        // Rebalanced away and back: redelivered from the committed offset 5.
        progress.begin(r(5))
        XCTAssertNil(progress.finish(r(6)), "6 from before the rewind is not tracked any more")
        XCTAssertEqual(progress.finish(r(5))?.offset, 5)
    }
}
