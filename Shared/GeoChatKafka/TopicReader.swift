import Dispatch
import GeoChatMetrics
import Logging
import Metrics
import Synchronization

/// One librdkafka consumer handle reading a fixed set of topics: what a
/// `KafkaConsumer` reads through, one reader per topic generation
/// (`TopicGenerations`; one for the consumer's life when its topics do not rotate).
///
/// Records leave it named by their logical topic, with their generation.
final class TopicReader: Sendable {
    enum Start: Sendable {
        /// A member of the group: committed offsets, else the earliest record.
        case group(String)
        /// Every partition from its end as the broker reports it at `start()`.
        case fromEnd
        /// Every partition from its first record (a generation opened ahead of its first record).
        case fromBeginning
        /// Every partition from its first record, noting each one's end at start (state topics).
        case replay
    }

    /// The generation it reads (nil: its topics do not rotate).
    let generation: Int64?
    private let handle: RDKafkaConsumerHandle
    /// Physical topic names, and the logical name of each.
    private let topics: [String]
    private let logicalNames: [String: String]
    private let start: Start
    private let fetchWaitMs: Int
    private let logger: Logger
    /// `poll` and `close` run on this queue only: librdkafka wants them serialized.
    private let queue: DispatchQueue
    private let closed = Atomic<Bool>(false)
    private let lastError = Mutex<(text: String, at: ContinuousClock.Instant)?>(nil)
    private let replayEnds = Mutex<[String: Int64]>([:])
    /// The offset of the next record to hand out, per partition (physical names).
    private let nextOffsets = Mutex<[PartitionID: Int64]>([:])
    /// Group mode: the last offset handed out and the last stored as processed, per partition.
    private let progress = Mutex<(handedOut: [PartitionID: Int64], stored: [PartitionID: Int64])>(([:], [:]))
    /// Records polled before this reader was to hand any out (a generation opened ahead).
    private let held = Mutex<[KafkaRecord]>([])
    /// One lag gauge per topic label, labelled with the group (or `tail`); sampled while polling.
    private let lagGauges: [String: Gauge]
    private let lagSampledAt = Mutex<ContinuousClock.Instant>(.now)
    private let metricLabel: @Sendable (String) -> String
    static let lagSampleInterval: Duration = .seconds(2)

    init(
        settings: KafkaSettings, topics logical: [String], generation: Int64?, start: Start, fetchWaitMs: Int,
        metricsGroup: String, logger: Logger
    ) throws {
        self.generation = generation
        let physical = logical.map { topic in
            generation.map { settings.generations!.physical(topic, generation: $0) } ?? topic
        }
        self.topics = physical
        self.logicalNames = Dictionary(zip(physical, logical), uniquingKeysWith: { first, _ in first })
        self.start = start
        self.fetchWaitMs = fetchWaitMs
        self.logger = logger
        self.metricLabel = settings.metricLabel
        let properties: [String: String]
        switch start {
        case .group(let group):
            properties = settings.consumerProperties(
                group: group, commits: true, reset: "earliest", fetchWaitMaxMs: fetchWaitMs)
        case .fromEnd, .fromBeginning, .replay:
            // No group is joined; the id only names the client. A position past the
            // end (the broker lost the topic and made it anew) restarts at the beginning.
            properties = settings.consumerProperties(
                group: "tail-\(settings.clientID)", commits: false, reset: "earliest", fetchWaitMaxMs: fetchWaitMs)
        }
        handle = try RDKafkaConsumerHandle(properties: properties)
        lagGauges = Dictionary(
            Set(logical.map(settings.metricLabel)).map { topicLabel in
                (
                    topicLabel,
                    Gauge(
                        label: MetricNames.kafkaConsumerLag,
                        dimensions: [("topic", topicLabel), ("group", metricsGroup)])
                )
            }, uniquingKeysWith: { first, _ in first })
        queue = DispatchQueue(label: "kafka-consumer-\(physical.joined(separator: ","))")
    }

    /// Joins the group, or takes every partition. The topics must exist.
    func begin() async throws {
        try await offloaded { [self] in try beginBlocking() }
    }

    private func beginBlocking() throws {
        switch start {
        case .group:
            // A missing topic would be subscribed to silently and joined minutes
            // later: fail, so the caller tries again once it exists.
            for topic in topics { _ = try handle.partitionCount(topic, timeoutMs: 5000) }
            try handle.subscribe(topics)
        case .fromEnd:
            let starts = try handle.assignFromEnd(try allPartitions(), timeoutMs: 5000)
            nextOffsets.withLock { $0 = starts }
        case .fromBeginning:
            let partitions = try allPartitions()
            try handle.assignFromBeginning(partitions)
            nextOffsets.withLock { offsets in for p in partitions { offsets[p] = 0 } }
        case .replay:
            var partitions: [PartitionID] = []
            var ends: [String: Int64] = [:]
            for topic in topics {
                for partition in try handle.highWatermarks(topic, timeoutMs: 5000).keys {
                    let id = PartitionID(topic: topic, partition: partition)
                    partitions.append(id)
                    // Only what a partition still holds is there to read: one
                    // emptied by retention (low = high) has nothing, however
                    // high its offsets went.
                    let (low, high) = try handle.watermarks(id, timeoutMs: 5000)
                    if high > low { ends["\(logicalNames[topic] ?? topic)/\(partition)"] = high }
                }
            }
            try handle.assignFromBeginning(partitions)
            replayEnds.withLock { $0 = ends }
            nextOffsets.withLock { offsets in for p in partitions { offsets[p] = 0 } }
        }
    }

    private func allPartitions() throws -> [PartitionID] {
        var partitions: [PartitionID] = []
        for topic in topics {
            let count = try handle.partitionCount(topic, timeoutMs: 5000)
            partitions += (0..<Int32(count)).map { PartitionID(topic: topic, partition: $0) }
        }
        return partitions
    }

    /// Reading without a group, it keeps its own positions.
    private var followsPositions: Bool {
        if case .group = start { return false }
        return true
    }

    /// One check of `KafkaConsumer.followRecreatedTopics`: the partitions whose next
    /// expected offset lies above their high watermark, both as the last fetch
    /// response and as the broker's answer now have it, are read again from their
    /// start. Returns the logical topics rewound.
    func rewindRecreated() async -> [String] {
        guard followsPositions, !isClosed else { return [] }
        let expected = nextOffsets.withLock { $0 }
        guard !expected.isEmpty else { return [] }
        // Watermark queries block on the network: off the poll queue, off the cooperative pool.
        let behind =
            (try? await offloaded { [handle] in
                expected.compactMap { partition, next -> PartitionID? in
                    guard let fetched = handle.lastFetchedHighWatermark(partition), next > fetched,
                        let high = try? handle.watermarks(partition, timeoutMs: 1000).high, next > high
                    else { return nil }
                    return partition
                }
            }) ?? []
        guard !behind.isEmpty else { return [] }
        do {
            // Seeks on the poll queue, so no poll runs between the check and the seek.
            try await onPollQueue { [self] () throws(KafkaError) in
                try handle.seekToBeginning(behind, timeoutMs: 2000)
                nextOffsets.withLock { offsets in for p in behind { offsets[p] = 0 } }
            }
            logger.warning(
                "topic was made anew by the broker; reading it from its start",
                metadata: ["partitions": "\(behind.map { "\($0.topic)[\($0.partition)]" }.sorted())"])
            return Array(Set(behind.map { logicalNames[$0.topic] ?? $0.topic })).sorted()
        } catch {
            logger.warning("could not rewind re-created partitions", metadata: ["error": "\(error)"])
            return []
        }
    }

    /// Without a group: stops fetching, its positions kept (`wake` reads on from
    /// them). On a broker that answers a fetch only when its wait ends, an idle
    /// reader costs it a fetch every wait; resting costs nothing. A record being
    /// handed out meanwhile may be handed out again after `wake`: only for
    /// readers whose consumer ignores a repeat (a reply's waiter is gone).
    func rest() throws(KafkaError) {
        guard followsPositions, !isClosed else { return }
        try handle.unassignAll()
    }

    /// Fetches again from the next offset it has not handed out, at once.
    func wake() throws(KafkaError) {
        guard followsPositions, !isClosed else { return }
        try handle.assign(nextOffsets.withLock { $0 })
    }

    /// Waits until its generation was read to the end, or `limit` passed; the
    /// owner keeps polling it meanwhile. The end is the high watermark each
    /// partition has when this starts, after the switch: nothing new comes.
    /// - Without a group: every partition handed out up to the high watermark
    ///   its fetcher saw last, three fetch waits after this starts (a record
    ///   acknowledged later than that may come after the next generation's
    ///   records: readers without a group heal gaps, `RoomTimelines`).
    /// - In a group: every partition of the topics committed up to there by
    ///   whichever member holds it (its own stored offsets are committed at
    ///   once each round), so no member reads the next generation of a key
    ///   while another still works on the previous one.
    func drain(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        var targets: [PartitionID: Int64]?
        while ContinuousClock.now < deadline, !isClosed, !Task.isCancelled {
            if targets == nil, followsPositions {
                // The ends its fetcher last saw, once it fetched a few more times since
                // the switch: asking the broker for 32 partitions' ends (Tansu's
                // ListOffsets lists every batch of a full generation) held the next
                // generation of a gateway's feed for about a second.
                try? await Task.sleep(for: .milliseconds(3 * fetchWaitMs))
                let next = nextOffsets.withLock { $0 }
                targets = Dictionary(
                    uniqueKeysWithValues: next.map { p, offset in
                        (p, handle.lastFetchedHighWatermark(p) ?? offset)
                    })
            }
            if targets == nil {
                targets = try? await offloaded { [self] in
                    var ends: [PartitionID: Int64] = [:]
                    for p in try allPartitions() { ends[p] = try handle.watermarks(p, timeoutMs: 1000).high }
                    return ends
                }
            }
            if let targets {
                if followsPositions {
                    let next = nextOffsets.withLock { $0 }
                    if targets.allSatisfy({ p, end in (next[p] ?? 0) >= end }) { return true }
                } else {
                    handle.commitStoredSoon()
                    let committed = try? await offloaded { [handle] in
                        try handle.committed(Array(targets.keys), timeoutMs: 1000)
                    }
                    if let committed, targets.allSatisfy({ p, end in end == 0 || (committed[p] ?? 0) >= end }) {
                        return true
                    }
                }
            }
            try? await Task.sleep(for: .milliseconds(followsPositions ? 5 : 20))
        }
        return false
    }

    /// Group mode: true once every record handed out was stored as processed
    /// (closing then loses no work), or at once without a group.
    var processedAll: Bool {
        guard !followsPositions else { return true }
        return progress.withLock { progress in
            progress.handedOut.allSatisfy { partition, offset in (progress.stored[partition] ?? -1) >= offset }
        }
    }

    /// `.replay`: each partition's end when it started (`topic/partition` → offset).
    var replayTargets: [String: Int64] { replayEnds.withLock { $0 } }

    /// Marks a record done; its offset is committed with the next auto-commit.
    func markProcessed(_ record: KafkaRecord) {
        guard !followsPositions, !isClosed else { return }
        let physical = physicalName(record.topic)
        handle.storeOffset(topic: physical, partition: record.partition, offset: record.offset)
        progress.withLock { $0.stored[PartitionID(topic: physical, partition: record.partition)] = record.offset }
    }

    private func physicalName(_ logical: String) -> String {
        logicalNames.first { $0.value == logical }?.key ?? logical
    }

    /// The partitions it holds right now, by logical topic.
    func assignment() -> [TopicAssignment] {
        handle.assignment().map {
            TopicAssignment(topic: logicalNames[$0.topic] ?? $0.topic, partitions: $0.partitions)
        }
    }

    /// Leaves the group (committing what was processed) and frees the handle.
    func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        handle.interruptPoll()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [handle] in
                handle.close()
                continuation.resume()
            }
        }
    }

    /// Makes a poll waiting now return at once.
    func interruptPoll() { handle.interruptPoll() }

    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Runs `body` on the poll queue, so no poll runs beside it.
    private func onPollQueue(_ body: @escaping @Sendable () throws(KafkaError) -> Void) async throws {
        let done: Result<Void, KafkaError> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                guard !closed.load(ordering: .acquiring) else { return continuation.resume(returning: .success(())) }
                do throws(KafkaError) {
                    try body()
                    continuation.resume(returning: .success(()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        try done.get()
    }

    /// Up to 256 records, waiting at most `timeoutMs` for the first: what it
    /// holds from before, else what the handle has.
    func pollBatch(timeoutMs: Int32) async -> [KafkaRecord] {
        let before = held.withLock { records -> [KafkaRecord] in
            defer { records = [] }
            return records
        }
        if !before.isEmpty { return before }
        return await poll(timeoutMs: timeoutMs)
    }

    /// Polls without waiting and keeps what it got for the next `pollBatch`:
    /// a generation opened ahead serves its group's rebalances before its turn.
    func pollAndHold() async {
        let batch = await poll(timeoutMs: 0)
        if !batch.isEmpty { held.withLock { $0 += batch } }
    }

    private func poll(timeoutMs: Int32) async -> [KafkaRecord] {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                guard !closed.load(ordering: .acquiring) else { return continuation.resume(returning: []) }
                var batch: [KafkaRecord] = []
                var timeout = timeoutMs
                polling: while batch.count < 256 {
                    switch handle.poll(timeoutMs: timeout) {
                    case .record(var record):
                        record.topic = logicalNames[record.topic] ?? record.topic
                        record.generation = generation
                        batch.append(record)
                    case .nothing: break polling
                    case .error(let text): report(text)
                    }
                    timeout = 0
                }
                if !batch.isEmpty { noteHandedOut(batch) }
                continuation.resume(returning: batch)
                account(batch)
            }
        }
    }

    private func noteHandedOut(_ batch: [KafkaRecord]) {
        let physical = batch.map { PartitionID(topic: physicalName($0.topic), partition: $0.partition) }
        nextOffsets.withLock { offsets in
            for (partition, record) in zip(physical, batch) { offsets[partition] = record.offset + 1 }
        }
        guard !followsPositions else { return }
        progress.withLock { progress in
            for (partition, record) in zip(physical, batch) { progress.handedOut[partition] = record.offset }
        }
    }

    /// Counts a batch by topic and, every `lagSampleInterval`, samples the lag
    /// (runs on the poll queue, after the batch was handed over).
    private func account(_ batch: [KafkaRecord]) {
        if let first = batch.first {
            if batch.allSatisfy({ $0.topic == first.topic }) {
                let label = metricLabel(first.topic)
                KafkaMetrics.consumed[label].increment(by: batch.count)
                KafkaMetrics.consumedBytes[label].increment(by: batch.reduce(0) { $0 + $1.byteCount })
            } else {
                for record in batch {
                    let label = metricLabel(record.topic)
                    KafkaMetrics.consumed[label].increment()
                    KafkaMetrics.consumedBytes[label].increment(by: record.byteCount)
                }
            }
        }
        let now = ContinuousClock.now
        let due = lagSampledAt.withLock { last -> Bool in
            guard now - last >= Self.lagSampleInterval else { return false }
            last = now
            return true
        }
        guard due else { return }
        var lagByLabel: [String: Int64] = [:]
        for (topic, lag) in handle.lagByTopic() {
            lagByLabel[metricLabel(logicalNames[topic] ?? topic), default: 0] += lag
        }
        for (label, lag) in lagByLabel { lagGauges[label]?.record(lag) }
    }

    /// While the broker is away every poll reports the same error: log it once in a while.
    private func report(_ text: String) {
        let now = ContinuousClock.now
        let shouldLog = lastError.withLock { last -> Bool in
            if let last, last.text == text, now - last.at < .seconds(10) { return false }
            last = (text, now)
            return true
        }
        if shouldLog { logger.warning("kafka consumer error", metadata: ["error": "\(text)"]) }
    }
}
