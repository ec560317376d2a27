import Logging
import Synchronization

/// A consumer whose records arrive as an `AsyncSequence`.
///
/// Three ways to read:
/// - `.group`: a member of a consumer group (one owner per partition, rebalanced
///   as instances come and go). Offsets are committed only for records passed to
///   `markProcessed`, so a crash replays what was not finished (at-least-once).
/// - `.tail`: every partition of the topics, from their end, without a group and
///   without commits: how gateways follow event topics and their reply topic.
/// - `.replay`: every partition from its beginning, without a group: how every
///   instance loads state topics (settings, bans) whose latest record per key is the state.
///
/// Topics that rotate (`KafkaSettings.generations`, *tansu*) are read one
/// generation after the other: the next generation's reader is opened ahead
/// (its group joined before the switch), holds what it gets until the
/// previous generation was read up to the high watermark the broker reports
/// just after the switch, and then hands out records while the previous one,
/// for `tail` more, still hands out what reaches it late; then it is closed.
/// So each key keeps its order across the switch, and a record acknowledged
/// before another was sent is read before it (docs/architecture.md, "Topic generations").
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
        /// A requester's replies: `KafkaSettings.replyFetchWaitMaxMs`. Such a
        /// reader rests while no request waits, so its wait costs nothing idle.
        case replies
    }

    private let settings: KafkaSettings
    private let topics: [String]
    private let mode: Mode
    private let fetchWaitMs: Int
    private let logger: Logger
    /// Set when every topic rotates; nil: one reader for the consumer's life.
    private let generations: TopicGenerations?
    private let state: Mutex<Readers>
    private let closed = Atomic<Bool>(false)
    private let remadeTopicsAction = Mutex<(@Sendable ([String]) -> Void)?>(nil)

    /// One reader, or two around a switch: the older first.
    private struct Readers {
        var readers: [TopicReader] = []
        /// With two readers: whether the newer one hands out records yet.
        var newerHandsOut = false
    }

    /// How long one poll waits for a record. A record ends the wait at once, so
    /// this is no latency; it is how often an idle consumer wakes (issue 14:
    /// the idle stack's CPU). `close` interrupts a waiting poll.
    static let idlePollMs: Int32 = 1000
    /// With two readers, how long a poll waits on the one that hands out.
    static let switchPollMs: Int32 = 20

    public init(settings: KafkaSettings, topics: [String], mode: Mode, pace: Pace, logger: Logger) throws {
        self.settings = settings
        self.topics = topics
        self.mode = mode
        self.logger = logger
        var fetchWait: Int
        switch pace {
        case .interactive: fetchWait = settings.fetchWaitMaxMs
        case .background: fetchWait = settings.backgroundFetchWaitMaxMs
        case .replies: fetchWait = settings.replyFetchWaitMaxMs
        }
        if case .group = mode {} else if let groupLess = settings.groupLessFetchWaitMaxMs { fetchWait = groupLess }
        self.fetchWaitMs = fetchWait
        // A consumer of topics some of which rotate would read the others once per
        // generation; none is built that way (state topics and replies never rotate).
        if let generations = settings.generations, !topics.isEmpty, topics.allSatisfy(generations.rotates) {
            if case .replay = mode {
                self.generations = nil
            } else {
                self.generations = generations
            }
        } else {
            self.generations = nil
        }
        state = Mutex(Readers())
    }

    /// Joins the group, or takes every partition from the end (`.tail`) or the
    /// beginning (`.replay`). The topics must exist. A group member of rotating
    /// topics also opens the previous generation, so what its group left
    /// unfinished there (an instance restarted across a switch) is read first.
    public func start() async throws {
        guard state.withLock({ $0.readers.isEmpty }) else { return }
        guard let generations else {
            let reader = try makeReader(generation: nil, start: readerStart(for: nil, opening: .first))
            try await reader.begin()
            state.withLock { $0.readers = [reader] }
            return
        }
        let current = generations.generation(atMs: wallClockMs())
        var opened: [TopicReader] = []
        if case .group = mode,
            let previous = try? makeReader(
                generation: current - 1, start: readerStart(for: current - 1, opening: .first))
        {
            do {
                try await previous.begin()
                opened.append(previous)
            } catch {
                await previous.close()  // the broker has no such generation (it started since)
            }
        }
        let reader = try makeReader(
            generation: current, start: readerStart(for: current, opening: opened.isEmpty ? .first : .next))
        do {
            try await reader.begin()
        } catch {
            for reader in opened + [reader] { await reader.close() }
            throw error
        }
        opened.append(reader)
        state.withLock { $0.readers = opened }
    }

    private enum Opening { case first, next }

    private func readerStart(for generation: Int64?, opening: Opening) -> TopicReader.Start {
        switch mode {
        case .group(let group): return .group(generation.map { TopicGenerations.group(group, generation: $0) } ?? group)
        case .tail: return opening == .first ? .fromEnd : .fromBeginning
        case .replay: return .replay
        }
    }

    private func makeReader(generation: Int64?, start: TopicReader.Start) throws -> TopicReader {
        let metricsGroup: String
        switch mode {
        case .group(let group): metricsGroup = group
        case .tail: metricsGroup = "tail"
        case .replay: metricsGroup = "replay"
        }
        return try TopicReader(
            settings: settings, topics: topics, generation: generation, start: start, fetchWaitMs: fetchWaitMs,
            metricsGroup: metricsGroup, logger: logger)
    }

    /// Whether its topics rotate (`followGenerations` has work).
    public var rotates: Bool { generations != nil }

    /// The group this member reads rotating topics under (one group a generation), if it does.
    public var rotatingGroup: String? {
        if case .group(let group) = mode, rotates { group } else { nil }
    }

    /// *tansu*: moves from each generation of the topics to the next as the
    /// clock passes their switch (see the type's comment). Runs until
    /// cancelled; returns at once when the topics do not rotate.
    public func followGenerations() async {
        guard let generations else { return }
        let grace: Duration = .milliseconds(50)
        // Records still on their way to the broker at the switch land within the
        // producer's message timeout; after that the old generation stays quiet.
        let tail = min(Duration.milliseconds(settings.messageTimeoutMs + 1000), .milliseconds(generations.periodMs / 2))
        // Tansu gives a new group member its partitions after about half the session timeout.
        let lead: Duration
        let drainLimit: Duration
        if case .group = mode {
            lead = .milliseconds(max(2000, settings.sessionTimeoutMs))
            drainLimit = .milliseconds(max(5000, settings.sessionTimeoutMs))
        } else {
            lead = .seconds(1)
            drainLimit = .seconds(5)
        }
        while !Task.isCancelled, !isClosed {
            let readers = state.withLock { $0.readers }
            guard let newest = readers.last, let newestGeneration = newest.generation else { return }
            if readers.count == 1 {
                let next = newestGeneration + 1
                guard await sleep(untilMs: generations.startMs(of: next), less: lead) else { return }
                guard let opened = await openRetrying(generation: next) else { return }
                state.withLock { $0.readers.append(opened) }
                continue
            }
            let older = readers[0]
            let switchMs = generations.startMs(of: newestGeneration)
            guard await sleep(untilMs: switchMs, more: grace) else { return }
            if !(await older.drain(within: drainLimit)) {
                logger.warning(
                    "next topic generation reads before the previous one was read to its end",
                    metadata: ["topics": "\(topics)", "generation": "\(newestGeneration)"])
            }
            state.withLock { $0.newerHandsOut = true }
            older.interruptPoll()
            guard await sleep(untilMs: switchMs, more: tail) else { return }
            // A group member closes a generation once the work it handed out is stored as done.
            let closeBy = ContinuousClock.now + .seconds(30)
            while !older.processedAll, ContinuousClock.now < closeBy, !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(50))
            }
            state.withLock { state in
                state.readers.removeFirst()
                state.newerHandsOut = false
            }
            await older.close()
        }
    }

    /// Opens a generation's reader, trying again every second (its topics are
    /// made ahead by `TopicProvisioner`; a broker that restarted makes them anew).
    private func openRetrying(generation: Int64) async -> TopicReader? {
        var attempt = 0
        while !Task.isCancelled, !isClosed {
            do {
                let reader = try makeReader(generation: generation, start: readerStart(for: generation, opening: .next))
                do {
                    try await reader.begin()
                    return reader
                } catch {
                    await reader.close()
                    throw error
                }
            } catch {
                attempt += 1
                if attempt == 1 || attempt % 10 == 0 {
                    logger.warning(
                        "next topic generation not readable yet, retrying",
                        metadata: ["topics": "\(topics)", "generation": "\(generation)", "error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        return nil
    }

    /// Sleeps until the wall clock reads `ms` plus `more` minus `less`; false when cancelled.
    private func sleep(untilMs ms: Int64, more: Duration = .zero, less: Duration = .zero) async -> Bool {
        let offset = (more - less).components
        let targetMs = ms + offset.seconds * 1000 + offset.attoseconds / 1_000_000_000_000_000
        let waitMs = targetMs - wallClockMs()
        if waitMs > 0 {
            do { try await Task.sleep(for: .milliseconds(waitMs)) } catch { return false }
        }
        return !Task.isCancelled && !isClosed
    }

    /// *tansu*, tail and replay modes: notices partitions whose topic the broker
    /// made anew and reads them again from their first record. A broker that
    /// keeps topics in memory (Tansu) forgets them when it restarts; once they
    /// are re-created their offsets start at 0 again, below where this consumer
    /// stood, and a fetch there would wait forever. "Next expected offset above
    /// the high watermark" cannot happen on a topic that lives on, so it is the
    /// signal. Both the broker's answer to a watermark query and the high
    /// watermark of the last fetch response must show it: under load Tansu's
    /// query answer can lag behind records already fetched (seen in the
    /// benchmark as rewinds of live topics every few seconds), a fetch
    /// response's cannot. Runs until cancelled; a durable Kafka cluster never triggers it.
    public func followRecreatedTopics(every interval: Duration = .seconds(1)) async {
        if case .group = mode { return }
        while !Task.isCancelled && !isClosed {
            try? await Task.sleep(for: interval)
            var remade: Set<String> = []
            for reader in state.withLock({ $0.readers }) { remade.formUnion(await reader.rewindRecreated()) }
            if !remade.isEmpty { remadeTopicsAction.withLock { $0 }?(remade.sorted()) }
        }
    }

    /// Called with the topics `followRecreatedTopics` found made anew, after this
    /// consumer went back to their start: what the broker held before it
    /// restarted is gone, and a reader that builds state from the topic may have
    /// missed records (a gateway then asks the owners for what it lacks at once).
    public func whenTopicsRemade(_ action: @escaping @Sendable ([String]) -> Void) {
        remadeTopicsAction.withLock { $0 = action }
    }

    /// `.replay`: each partition's end when the consumer started (`topic/partition`
    /// → offset). A reader that has read up to these has loaded the state.
    public var replayTargets: [String: Int64] { state.withLock { $0.readers.first }?.replayTargets ?? [:] }

    public var records: Records { Records(consumer: self) }

    /// Marks a record done; its offset is committed with the next auto-commit.
    public func markProcessed(_ record: KafkaRecord) {
        guard case .group = mode else { return }
        let reader = state.withLock { $0.readers.first { $0.generation == record.generation } }
        reader?.markProcessed(record)
    }

    /// True once the group gave this member partitions (or, in tail mode, once
    /// started): before that, commands sent to it wait.
    /// Around a switch, the reader that hands out records counts: the older one
    /// until the newer takes over (before every switch the newer one joins its
    /// group ahead, and the member must stay ready meanwhile).
    public var holdsPartitions: Bool {
        let (readers, newerHandsOut) = state.withLock { ($0.readers, $0.newerHandsOut) }
        guard let handingOut = newerHandsOut ? readers.last : readers.first else { return false }
        return !handingOut.assignment().isEmpty
    }

    /// The partitions this consumer holds right now (of every generation it reads).
    public func assignment() -> [TopicAssignment] {
        var byTopic: [String: Set<Int32>] = [:]
        for reader in state.withLock({ $0.readers }) {
            for held in reader.assignment() { byTopic[held.topic, default: []].formUnion(held.partitions) }
        }
        return byTopic.keys.sorted().map { TopicAssignment(topic: $0, partitions: byTopic[$0]!.sorted()) }
    }

    /// Without a group: stops fetching until `wake`, positions kept. For a reader
    /// that expects nothing (a reply topic while no request waits) and ignores a
    /// record handed out twice across a rest (`TopicReader.rest`).
    public func rest() {
        if case .group = mode { return }
        for reader in state.withLock({ $0.readers }) {
            do { try reader.rest() } catch {
                logger.warning("consumer could not rest", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Fetches again from where `rest` stopped, at once (a new assignment wakes
    /// librdkafka's fetcher; a resumed pause would wait up to a second).
    public func wake() {
        if case .group = mode { return }
        for reader in state.withLock({ $0.readers }) {
            do { try reader.wake() } catch {
                logger.warning("consumer could not wake", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Leaves the group (committing what was processed) and frees the handles.
    public func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for reader in state.withLock({ $0.readers }) { await reader.close() }
    }

    fileprivate var isClosed: Bool { closed.load(ordering: .acquiring) }

    fileprivate func pollBatch() async -> [KafkaRecord] {
        let (readers, newerHandsOut) = state.withLock { ($0.readers, $0.newerHandsOut) }
        switch readers.count {
        case 0:
            try? await Task.sleep(for: .milliseconds(100))  // not started
            return []
        case 1:
            return await readers[0].pollBatch(timeoutMs: Self.idlePollMs)
        default:
            let (older, newer) = (readers[0], readers[1])
            if newerHandsOut {
                let late = await older.pollBatch(timeoutMs: 0)
                if !late.isEmpty { return late }
                return await newer.pollBatch(timeoutMs: Self.switchPollMs)
            }
            let batch = await older.pollBatch(timeoutMs: Self.switchPollMs)
            await newer.pollAndHold()
            return batch
        }
    }

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

/// A topic and the partitions a consumer holds of it.
public struct TopicAssignment: Sendable, Equatable, Codable {
    public var topic: String
    public var partitions: [Int32]
}
