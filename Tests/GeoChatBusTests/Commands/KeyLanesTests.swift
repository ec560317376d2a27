import GeoChatKafka
import GeoChatTestSupport
import Synchronization
import Testing

@testable import GeoChatBus

/// Commands of one key keep their order; keys are worked on side by side; a
/// partition is committed only up to its first unfinished record.
///
/// No sleeps: each record's work waits until the test releases it, and the
/// test waits for what the lanes do next (a record started, a commit), so
/// every expected sequence below is exact.
@Suite(.timeLimit(.minutes(1)))
struct KeyLanesTests {
    struct RecordID: Hashable, CustomStringConvertible {
        let partition: Int32
        let offset: Int64
        var generation: Int64? = nil
        var description: String { "\(generation.map { "g\($0):" } ?? "")\(partition)/\(offset)" }
    }

    enum Event: Hashable, CustomStringConvertible {
        case started(RecordID)
        case committed(RecordID)
        var description: String {
            switch self {
            case .started(let id): "started \(id)"
            case .committed(let id): "committed \(id)"
            }
        }
    }

    /// `KeyLanes` over records whose work lasts until the test releases them.
    final class Lanes: Sendable {
        private struct State {
            var waiting: [RecordID: CheckedContinuation<Void, Never>] = [:]
            var releasedEarly: Set<RecordID> = []
            var running = 0
            var mostAtOnce = 0
        }

        private let state = Mutex(State())
        let events: AsyncStream<Event>
        let sink: AsyncStream<Event>.Continuation

        private init() { (events, sink) = AsyncStream.makeStream(of: Event.self) }

        static func start(_ records: [KafkaRecord], maxInFlight: Int) -> Run {
            let lanes = Lanes()
            let task = Task {
                let (feed, feeder) = AsyncStream.makeStream(of: KafkaRecord.self)
                for record in records { feeder.yield(record) }
                feeder.finish()
                var iterator = feed.makeAsyncIterator()
                await KeyLanes(maxInFlight: maxInFlight).run(
                    next: { await iterator.next() }, { await lanes.work($0) },
                    committable: { lanes.sink.yield(.committed(RecordID($0))) })
                lanes.sink.finish()
            }
            return Run(lanes: lanes, task: task, events: lanes.events.makeAsyncIterator())
        }

        private func work(_ record: KafkaRecord) async {
            let id = RecordID(record)
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let goOn = state.withLock { state in
                    if state.releasedEarly.remove(id) != nil { return true }
                    state.running += 1
                    state.mostAtOnce = max(state.mostAtOnce, state.running)
                    state.waiting[id] = continuation
                    return false
                }
                sink.yield(.started(id))
                if goOn { continuation.resume() }
            }
        }

        func release(_ id: RecordID) {
            let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let continuation = state.waiting.removeValue(forKey: id) else {
                    state.releasedEarly.insert(id)
                    return nil
                }
                state.running -= 1
                return continuation
            }
            waiting?.resume()
        }

        var mostAtOnce: Int { state.withLock { $0.mostAtOnce } }
    }

    /// One run: what the test does to it, and the events it saw.
    struct Run {
        let lanes: Lanes
        let task: Task<Void, Never>
        var events: AsyncStream<Event>.Iterator

        /// The next `count` events (fewer only when the lanes ended).
        mutating func next(_ count: Int) async -> [Event] {
            var seen: [Event] = []
            while seen.count < count, let event = await events.next() { seen.append(event) }
            return seen
        }

        func release(_ id: RecordID) { lanes.release(id) }

        /// Expects exactly these events next, in this order.
        mutating func expectNext(
            _ expected: [Event], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
        ) async {
            let seen = await next(expected.count)
            #expect(seen == expected, comment, sourceLocation: sourceLocation)
        }

        /// Expects these events next, in any order.
        mutating func expectNext(anyOrder expected: Set<Event>, sourceLocation: SourceLocation = #_sourceLocation) async
        {
            let seen = await next(expected.count)
            #expect(Set(seen) == expected, sourceLocation: sourceLocation)
        }

        /// Waits for the lanes to end; expects no further event.
        mutating func expectEnd(sourceLocation: SourceLocation = #_sourceLocation) async {
            await task.value
            let rest = await next(Int.max)
            #expect(rest == [], "nothing after the expected events", sourceLocation: sourceLocation)
        }

        var mostAtOnce: Int { lanes.mostAtOnce }
    }

    static func record(partition: Int32 = 0, offset: Int64, key: String?) -> KafkaRecord {
        KafkaRecord(topic: "t", partition: partition, offset: offset, key: key.map { Array($0.utf8) }, value: [])
    }

    static func id(_ partition: Int32, _ offset: Int64) -> RecordID { RecordID(partition: partition, offset: offset) }
    static func started(_ offset: Int64, partition: Int32 = 0) -> Event { .started(id(partition, offset)) }
    static func committed(_ offset: Int64, partition: Int32 = 0) -> Event { .committed(id(partition, offset)) }

    @Test func oneRecordAtATimePerKeyAndKeysOfOnePartitionSideBySide() async {
        // One partition, four rooms, interleaved: offset o is room o % 4.
        let records = (0..<8).map { Self.record(offset: Int64($0), key: "room-\($0 % 4)") }
        var run = Lanes.start(records, maxInFlight: 64)
        // Every room's first record runs at once; none of the second ones.
        await run.expectNext(anyOrder: Set((0..<4).map { Self.started($0) }))
        run.release(Self.id(0, 2))
        await run.expectNext([Self.started(6)], "room 2's next; nothing committable while 0 runs")
        run.release(Self.id(0, 0))
        await run.expectNext([Self.committed(0), Self.started(4)])
        run.release(Self.id(0, 1))
        await run.expectNext([Self.committed(2), Self.started(5)])
        run.release(Self.id(0, 3))
        await run.expectNext([Self.committed(3), Self.started(7)])
        // Finishing 7, 6, 5 commits nothing: 4 is still running.
        for offset: Int64 in [7, 6, 5] { run.release(Self.id(0, offset)) }
        run.release(Self.id(0, 4))
        await run.expectNext([Self.committed(7)])
        await run.expectEnd()
        #expect(run.mostAtOnce == 4)
    }

    @Test func recordsWithoutAKeyKeepTheirPartitionsOrder() async {
        let records = (0..<6).map { Self.record(partition: Int32($0 % 2), offset: Int64($0 / 2), key: nil) }
        var run = Lanes.start(records, maxInFlight: 64)
        await run.expectNext(anyOrder: [Self.started(0, partition: 0), Self.started(0, partition: 1)])
        run.release(Self.id(1, 0))
        await run.expectNext([Self.committed(0, partition: 1), Self.started(1, partition: 1)])
        run.release(Self.id(0, 0))
        await run.expectNext([Self.committed(0, partition: 0), Self.started(1, partition: 0)])
        run.release(Self.id(0, 1))
        await run.expectNext([Self.committed(1, partition: 0), Self.started(2, partition: 0)])
        run.release(Self.id(0, 2))
        await run.expectNext([Self.committed(2, partition: 0)])
        run.release(Self.id(1, 1))
        await run.expectNext([Self.committed(1, partition: 1), Self.started(2, partition: 1)])
        run.release(Self.id(1, 2))
        await run.expectNext([Self.committed(2, partition: 1)])
        await run.expectEnd()
    }

    @Test func aSlowRecordHoldsBackTheCommitButNotOtherKeys() async {
        // Offset 0 (room a) runs until the end; offsets 1…9 (room b) finish meanwhile.
        let records = [Self.record(offset: 0, key: "a")] + (1..<10).map { Self.record(offset: Int64($0), key: "b") }
        var run = Lanes.start(records, maxInFlight: 64)
        await run.expectNext(anyOrder: [Self.started(0), Self.started(1)])
        for offset: Int64 in 1..<9 {
            run.release(Self.id(0, offset))
            await run.expectNext([Self.started(offset + 1)], "b did not wait for a")
        }
        run.release(Self.id(0, 9))
        // Nothing is committable until offset 0 is done; then everything at once.
        run.release(Self.id(0, 0))
        await run.expectNext([Self.committed(9)])
        await run.expectEnd()
    }

    @Test func generationsOfATopicAreCommittedApartAndAKeyKeepsItsOrderAcrossThem() async {
        // Partition 0 of generation 5 ends at offset 11; generation 6 starts again at 0.
        func record(_ generation: Int64, _ offset: Int64, _ key: String) -> KafkaRecord {
            KafkaRecord(
                topic: "t", partition: 0, offset: offset, key: Array(key.utf8), value: [], generation: generation)
        }
        func id(_ generation: Int64, _ offset: Int64) -> RecordID {
            RecordID(partition: 0, offset: offset, generation: generation)
        }
        let records = [record(5, 10, "a"), record(5, 11, "b"), record(6, 0, "a"), record(6, 1, "c")]
        var run = Lanes.start(records, maxInFlight: 64)
        await run.expectNext(anyOrder: [.started(id(5, 10)), .started(id(5, 11)), .started(id(6, 1))])
        run.release(id(6, 1))  // not committable: 6/0 has not run
        run.release(id(5, 11))
        run.release(id(5, 10))
        // Generation 5 is committed whole, and only then does a's next record start.
        await run.expectNext([.committed(id(5, 11)), .started(id(6, 0))])
        run.release(id(6, 0))
        await run.expectNext([.committed(id(6, 1))])
        await run.expectEnd()
    }

    @Test func noMoreThanMaxInFlightRecordsAreReadAhead() async {
        let records = (0..<12).map { Self.record(offset: Int64($0), key: "k\($0)") }
        var run = Lanes.start(records, maxInFlight: 3)
        await run.expectNext(anyOrder: [Self.started(0), Self.started(1), Self.started(2)])
        // Finishing one lets exactly one more in.
        run.release(Self.id(0, 1))
        await run.expectNext([Self.started(3)])
        run.release(Self.id(0, 0))
        await run.expectNext([Self.committed(1), Self.started(4)])
        for offset: Int64 in 2..<9 {
            run.release(Self.id(0, offset))
            await run.expectNext([Self.committed(offset), Self.started(offset + 3)])
        }
        for offset: Int64 in 9..<12 {
            run.release(Self.id(0, offset))
            await run.expectNext([Self.committed(offset)])
        }
        await run.expectEnd()
        #expect(run.mostAtOnce == 3)
    }

    /// Records finish in a random order; what the lanes start and commit is
    /// checked after every finish against the rules themselves: a lane's next
    /// record starts when its previous one finished, and a partition is
    /// committed up to the last offset whose predecessors all finished.
    @Test(arguments: 0..<12 as Range<UInt64>)
    func whateverOrderRecordsFinishInCommitsFollowTheFinishedPrefix(seed: UInt64) async {
        var random = SeededRandom(seed: seed)
        let records = (0..<90).map { (n: Int) -> KafkaRecord in
            let key: String? = n % 10 == 9 ? nil : "k\(n % 7)"
            return Self.record(partition: Int32(n % 3), offset: Int64(n / 3), key: key)
        }
        var run = Lanes.start(records, maxInFlight: 128)
        // The lanes as the rule defines them: per partition and key, in offset order.
        var lanesQueue: [String: [KafkaRecord]] = [:]
        func laneName(_ record: KafkaRecord) -> String {
            "\(record.partition)/\(record.key.map { String(decoding: $0, as: UTF8.self) } ?? "-")"
        }
        for record in records { lanesQueue[laneName(record), default: []].append(record) }
        var running = Set(lanesQueue.values.map { RecordID($0[0]) })
        var finished = Set<RecordID>()
        var committedUpTo: [Int32: Int64] = [:]

        await run.expectNext(anyOrder: Set(running.map(Event.started)))
        while !running.isEmpty {
            let candidates = running.sorted { ($0.partition, $0.offset) < ($1.partition, $1.offset) }
            let pick = candidates[Int(random.next() % UInt64(candidates.count))]
            running.remove(pick)
            finished.insert(pick)
            run.release(pick)
            var expected: [Event] = []
            var prefix = committedUpTo[pick.partition] ?? -1
            while finished.contains(Self.id(pick.partition, prefix + 1)) { prefix += 1 }
            if prefix != (committedUpTo[pick.partition] ?? -1) {
                committedUpTo[pick.partition] = prefix
                expected.append(.committed(Self.id(pick.partition, prefix)))
            }
            let record = records.first { RecordID($0) == pick }!
            lanesQueue[laneName(record)]!.removeFirst()
            if let next = lanesQueue[laneName(record)]!.first {
                running.insert(RecordID(next))
                expected.append(.started(RecordID(next)))
            }
            // A finish that shows nothing (no commit moves, no lane goes on) is not waited
            // for, so the lanes may take it in after a later one: its commit then comes
            // as a step below the one expected now, never beyond the finished prefix.
            var awaited = Set(expected)
            var seen: [Event] = []
            while !awaited.isEmpty {
                guard let event = await run.next(1).first else { break }
                seen.append(event)
                if awaited.remove(event) != nil { continue }
                if case .committed(let id) = event, id.offset < (committedUpTo[id.partition] ?? -1) { continue }
                break
            }
            guard awaited.isEmpty else {
                Issue.record("after finishing \(pick): \(seen), expected \(expected) (seed \(seed))")
                for record in records { run.release(RecordID(record)) }  // let the lanes end
                return
            }
        }
        #expect(committedUpTo == [0: 29, 1: 29, 2: 29])
        await run.expectEnd()
    }

    @Test func aPartitionReadAgainFromAnEarlierOffsetStartsItsProgressOver() {
        var progress = PartitionProgress()
        let r = { (offset: Int64) in Self.record(offset: offset, key: "k") }
        progress.begin(r(5))
        progress.begin(r(6))
        // Rebalanced away and back: redelivered from the committed offset 5.
        progress.begin(r(5))
        #expect(progress.finish(r(6)) == nil, "6 from before the rewind is not tracked any more")
        #expect(progress.finish(r(5))?.offset == 5)
    }
}

extension KeyLanesTests.RecordID {
    init(_ record: KafkaRecord) {
        self.init(partition: record.partition, offset: record.offset, generation: record.generation)
    }
}
