import Dispatch
import GeoChatMetrics
import Logging
import Metrics
import Synchronization

/// A consumer whose records arrive as an `AsyncSequence`.
///
/// Two ways to read:
/// - `.group`: a member of a consumer group (one owner per partition, rebalanced
///   as instances come and go). Offsets are committed only for records passed to
///   `markProcessed`, so a crash replays what was not finished (at-least-once).
/// - `.tail`: every partition of the topics, from their end, without a group and
///   without commits: how gateways follow event topics and their reply topic.
/// - `.replay`: every partition from its beginning, without a group: how every
///   instance loads state topics (settings, bans) whose latest record per key is the state.
public final class KafkaConsumer: Sendable {
    public enum Mode: Sendable {
        case group(String)
        case tail
        case replay
    }

    /// How soon a record must reach this consumer: sets its fetch wait.
    public enum Pace: Sendable {
        /// On a request's path: `KafkaSettings.fetchWaitMaxMs`.
        case interactive
        /// Off every request's path: `KafkaSettings.backgroundFetchWaitMaxMs`.
        case background
    }

    private let handle: RDKafkaConsumerHandle
    private let topics: [String]
    private let mode: Mode
    private let logger: Logger
    /// `poll` and `close` run on this queue only: librdkafka wants them serialized.
    private let queue: DispatchQueue
    private let closed = Atomic<Bool>(false)
    private let lastError = Mutex<(text: String, at: ContinuousClock.Instant)?>(nil)
    private let replayEnds = Mutex<[String: Int64]>([:])
    private let remadeTopicsAction = Mutex<(@Sendable ([String]) -> Void)?>(nil)
    /// Tail and replay modes: the offset of the next record expected from each partition.
    private let nextOffsets = Mutex<[PartitionID: Int64]>([:])
    /// One lag gauge per topic label, labelled with the group (or `tail`); sampled while polling.
    private let lagGauges: [String: Gauge]
    private let lagSampledAt = Mutex<ContinuousClock.Instant>(.now)
    private let metricLabel: @Sendable (String) -> String
    static let lagSampleInterval: Duration = .seconds(2)
    /// How long one poll waits for a record. A record ends the wait at once, so
    /// this is no latency; it is how often an idle consumer wakes (issue 14:
    /// the idle stack's CPU). `close` interrupts a waiting poll.
    static let idlePollMs: Int32 = 1000

    public init(settings: KafkaSettings, topics: [String], mode: Mode, pace: Pace, logger: Logger) throws {
        self.topics = topics
        self.mode = mode
        self.logger = logger
        self.metricLabel = settings.metricLabel
        var fetchWait: Int
        switch pace {
        case .interactive: fetchWait = settings.fetchWaitMaxMs
        case .background: fetchWait = settings.backgroundFetchWaitMaxMs
        }
        if case .group = mode {} else if let groupLess = settings.groupLessFetchWaitMaxMs { fetchWait = groupLess }
        let properties: [String: String]
        switch mode {
        case .group(let group):
            properties = settings.consumerProperties(
                group: group, commits: true, reset: "earliest", fetchWaitMaxMs: fetchWait)
        case .tail, .replay:
            // No group is joined; the id only names the client. A position past the
            // end (the broker lost the topic and made it anew) restarts at the beginning.
            properties = settings.consumerProperties(
                group: "tail-\(settings.clientID)", commits: false, reset: "earliest", fetchWaitMaxMs: fetchWait)
        }
        handle = try RDKafkaConsumerHandle(properties: properties)
        let groupLabel: String
        switch mode {
        case .group(let group): groupLabel = group
        case .tail: groupLabel = "tail"
        case .replay: groupLabel = "replay"
        }
        lagGauges = Dictionary(Set(topics.map(settings.metricLabel)).map { topicLabel in
            (topicLabel, Gauge(label: MetricNames.kafkaConsumerLag, dimensions: [("topic", topicLabel), ("group", groupLabel)]))
        }, uniquingKeysWith: { first, _ in first })
        queue = DispatchQueue(label: "kafka-consumer-\(topics.joined(separator: ","))")
    }

    /// Joins the group, or takes every partition from the end. The topics must exist.
    public func start() async throws {
        try await offloaded { [self] in try startBlocking() }
    }

    private func startBlocking() throws {
        switch mode {
        case .group:
            try handle.subscribe(topics)
        case .tail:
            var partitions: [PartitionID] = []
            for topic in topics {
                let count = try handle.partitionCount(topic, timeoutMs: 5000)
                partitions += (0..<Int32(count)).map { PartitionID(topic: topic, partition: $0) }
            }
            let starts = try handle.assignFromEnd(partitions, timeoutMs: 5000)
            nextOffsets.withLock { $0 = starts }
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
                    if high > low { ends["\(topic)/\(partition)"] = high }
                }
            }
            try handle.assignFromBeginning(partitions)
            replayEnds.withLock { $0 = ends }
            nextOffsets.withLock { offsets in for p in partitions { offsets[p] = 0 } }
        }
    }

    /// Tail and replay modes read without a group: they keep their own positions.
    private var followsPositions: Bool {
        switch mode {
        case .group: false
        case .tail, .replay: true
        }
    }

    /// Tail and replay modes: notices partitions whose topic the broker made anew and reads
    /// them again from their first record. A broker that keeps topics in memory
    /// (Tansu) forgets them when it restarts; once they are re-created their
    /// offsets start at 0 again, below where this consumer stood, and a fetch
    /// there would wait forever. "Next expected offset above the high
    /// watermark" cannot happen on a topic that lives on, so it is the signal.
    /// Both the broker's answer to a watermark query and the high watermark of
    /// the last fetch response must show it: under load Tansu's query answer
    /// can lag behind records already fetched (seen in the benchmark as
    /// rewinds of live topics every few seconds), a fetch response's cannot.
    /// Runs until cancelled; a durable Kafka cluster never triggers it.
    public func followRecreatedTopics(every interval: Duration = .seconds(1)) async {
        guard followsPositions else { return }
        while !Task.isCancelled && !isClosed {
            try? await Task.sleep(for: interval)
            let expected = nextOffsets.withLock { $0 }
            guard !expected.isEmpty else { continue }
            // Watermark queries block on the network: off the poll queue, off the cooperative pool.
            let behind = (try? await offloaded { [handle] in
                expected.compactMap { partition, next -> PartitionID? in
                    guard let fetched = handle.lastFetchedHighWatermark(partition), next > fetched,
                        let high = try? handle.watermarks(partition, timeoutMs: 1000).high, next > high
                    else { return nil }
                    return partition
                }
            }) ?? []
            guard !behind.isEmpty else { continue }
            await rewind(behind)
        }
    }

    /// Called with the topics `followRecreatedTopics` found made anew, after this
    /// consumer went back to their start: what the broker held before it
    /// restarted is gone, and a reader that builds state from the topic may have
    /// missed records (a gateway then asks the owners for what it lacks at once).
    public func whenTopicsRemade(_ action: @escaping @Sendable ([String]) -> Void) {
        remadeTopicsAction.withLock { $0 = action }
    }

    /// Seeks on the poll queue, so no poll runs between the check and the seek.
    private func rewind(_ partitions: [PartitionID]) async {
        do {
            try await onPollQueue { [self] () throws(KafkaError) in
                try handle.seekToBeginning(partitions, timeoutMs: 2000)
                nextOffsets.withLock { offsets in for p in partitions { offsets[p] = 0 } }
            }
            logger.warning(
                "topic was made anew by the broker; reading it from its start",
                metadata: ["partitions": "\(partitions.map { "\($0.topic)[\($0.partition)]" }.sorted())"])
            remadeTopicsAction.withLock { $0 }?(Array(Set(partitions.map(\.topic))).sorted())
        } catch {
            logger.warning("could not rewind re-created partitions", metadata: ["error": "\(error)"])
        }
    }

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

    /// `.replay`: each partition's end when the consumer started (`topic/partition`
    /// → offset). A reader that has read up to these has loaded the state.
    public var replayTargets: [String: Int64] { replayEnds.withLock { $0 } }

    public var records: Records { Records(consumer: self) }

    /// Marks a record done; its offset is committed with the next auto-commit.
    public func markProcessed(_ record: KafkaRecord) {
        guard case .group = mode else { return }
        handle.storeOffset(topic: record.topic, partition: record.partition, offset: record.offset)
    }

    /// True once the group gave this member partitions (or, in tail mode, once
    /// started): before that, commands sent to it wait.
    public var holdsPartitions: Bool { !handle.assignment().isEmpty }

    /// The partitions this consumer holds right now.
    public func assignment() -> [TopicAssignment] { handle.assignment() }

    /// Leaves the group (committing what was processed) and frees the handle.
    public func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        handle.interruptPoll()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [handle] in
                handle.close()
                continuation.resume()
            }
        }
    }

    fileprivate func pollBatch() async -> [KafkaRecord] {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                guard !closed.load(ordering: .acquiring) else { return continuation.resume(returning: []) }
                var batch: [KafkaRecord] = []
                var timeout = Self.idlePollMs
                polling: while batch.count < 256 {
                    switch handle.poll(timeoutMs: timeout) {
                    case .record(let record): batch.append(record)
                    case .nothing: break polling
                    case .error(let text): report(text)
                    }
                    timeout = 0
                }
                if followsPositions, !batch.isEmpty {
                    nextOffsets.withLock { offsets in
                        for record in batch {
                            offsets[PartitionID(topic: record.topic, partition: record.partition)] = record.offset + 1
                        }
                    }
                }
                continuation.resume(returning: batch)
                account(batch)
            }
        }
    }

    /// Counts a batch by topic and, every `lagSampleInterval`, samples the lag
    /// (runs on the poll queue, after the batch was handed over).
    private func account(_ batch: [KafkaRecord]) {
        if let first = batch.first {
            if batch.allSatisfy({ $0.topic == first.topic }) {
                KafkaMetrics.consumed[metricLabel(first.topic)].increment(by: batch.count)
            } else {
                for record in batch { KafkaMetrics.consumed[metricLabel(record.topic)].increment() }
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
        for (topic, lag) in handle.lagByTopic() { lagByLabel[metricLabel(topic), default: 0] += lag }
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

    fileprivate var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// The records as each poll returns them (at most 256 at once), for readers
    /// that apply many in one statement.
    public var batches: Batches { Batches(consumer: self) }

    public struct Batches: AsyncSequence, Sendable {
        public typealias Element = [KafkaRecord]
        let consumer: KafkaConsumer

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(consumer: consumer) }

        public struct AsyncIterator: AsyncIteratorProtocol {
            let consumer: KafkaConsumer

            public mutating func next() async -> [KafkaRecord]? {
                while true {
                    if consumer.isClosed || Task.isCancelled { return nil }
                    let batch = await consumer.pollBatch()
                    if !batch.isEmpty { return batch }
                }
            }
        }
    }

    public struct Records: AsyncSequence, Sendable {
        public typealias Element = KafkaRecord
        let consumer: KafkaConsumer

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(consumer: consumer) }

        public struct AsyncIterator: AsyncIteratorProtocol {
            let consumer: KafkaConsumer
            var buffer: [KafkaRecord] = []
            var index = 0

            public mutating func next() async -> KafkaRecord? {
                while index == buffer.count {
                    if consumer.isClosed || Task.isCancelled { return nil }
                    buffer = await consumer.pollBatch()
                    index = 0
                }
                defer { index += 1 }
                return buffer[index]
            }
        }
    }
}
