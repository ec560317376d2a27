import Foundation
import GeoChatDomain
import GeoChatKafka
import Logging
import Synchronization
import Tracing

/// Sends commands to the services that own them and waits for their replies.
///
/// Every command carries a correlation id (to find its waiter), an idempotency
/// key (so retries never do a thing twice) and a deadline (after which the owner
/// drops it). Replies come back on this instance's own one-partition topic,
/// which this client reads from its end without a consumer group.
public final class KafkaCommandBus: CommandBus {
    /// The reply topic requests name now: a new one after `replyTopicRecords`
    /// replies, where the settings ask for it (`ReplyTopics`).
    public var replyTopic: String { replies.withLock { $0.current } }
    private let instance: String
    private let replies: Mutex<ReplyTopics>
    private let producer: any RecordSender
    private let provisioner: TopicProvisioner
    private let settings: KafkaSettings
    /// One consumer per reply topic: a replaced topic's consumer is closed
    /// before the topic is deleted (librdkafka 2.16 crashed in its metadata
    /// cache when a topic a live handle had read was deleted).
    private let readers: Mutex<[String: KafkaConsumer]>
    private let firstReader: KafkaConsumer
    private let newReaders: AsyncStream<KafkaConsumer>
    private let newReader: AsyncStream<KafkaConsumer>.Continuation
    private let logger: Logger
    private let waiting = Mutex<[String: ReplyWaiter]>([:])
    private let ready = Atomic<Bool>(false)
    private let pingID = "ping-" + KafkaCommandBus.randomToken()
    /// Wakes the expiry loop when a request starts waiting: with none waiting
    /// the loop sleeps (an idle instance does not tick).
    private let waitersArrived = Doorbell()
    /// Whether the reply readers fetch; their rest and wake happen under this lock.
    private let fetching: Mutex<ReplyFetching>

    private let profile: BrokerProfile
    /// This instance reads the event topics and hands their answers to `answered` (a gateway).
    private let readsEvents: Bool

    /// `readsEvents`: the instance reads the event topics and passes the
    /// answers they carry to `answered` (a gateway's event feed), so its
    /// requests say so and an owner may answer in an event (`RequestEnvelope.readsEvents`).
    public init(
        instance: String, settings: KafkaSettings, producer: KafkaProducer, readsEvents: Bool = false,
        logger: Logger
    ) throws {
        self.instance = instance
        self.readsEvents = readsEvents
        let replies = ReplyTopics(
            instance: instance, rotateAfter: settings.replyTopicRecords, startedAtMs: WallClock.nowMs())
        self.replies = Mutex(replies)
        self.producer = producer
        self.provisioner = TopicProvisioner(producer: producer, settings: settings, logger: logger)
        self.profile = settings.profile
        self.settings = settings
        let first = replies.current
        self.fetching = Mutex(ReplyFetching(quiet: settings.replyReaderQuiet, now: .now))
        self.firstReader = try KafkaConsumer(
            settings: settings, topics: [first], mode: .tail, pace: .replies, logger: logger)
        self.readers = Mutex([first: firstReader])
        (newReaders, newReader) = AsyncStream.makeStream()
        self.logger = logger
    }

    /// True once a reply sent to ourselves came back: the reply path works end to end.
    public var isReady: Bool { ready.load(ordering: .acquiring) }

    /// Reads replies until cancelled. Also expires waiters whose deadline passed.
    public func run() async throws {
        // Always made by its instance, whatever `TopicsMode` says: its name is
        // the instance's (docs/operations.md: the create right on `geochat.replies.`).
        try await provisioner.ensureRetrying(replyTopics, mode: .create)
        try await firstReader.start()
        await withDiscardingTaskGroup { group in
            group.addTask { try? await self.expireLoop() }
            group.addTask { try? await self.pingUntilReady() }
            group.addTask { try? await self.keepTopicLoop() }
            group.addTask { try? await self.retireLoop() }
            group.addTask { try? await self.restLoop() }
            group.addTask { await self.read(self.firstReader) }
            for await reader in newReaders {
                group.addTask { await self.read(reader) }
            }
            group.cancelAll()
        }
    }

    private func read(_ reader: KafkaConsumer) async {
        await withDiscardingTaskGroup { group in
            if profile.followsRecreatedTopics { group.addTask { await reader.followRecreatedTopics() } }
            for await record in reader.records {
                deliver(record)
            }
            group.cancelAll()
        }
    }

    /// Stops reading replies. `deletingReplyTopic`: the instance's id was made
    /// up at start (no `GEOCHAT_INSTANCE_ID`), so no later process will use
    /// this topic again; it goes rather than being left behind.
    public func shutdown(deletingReplyTopic: Bool = false) async {
        newReader.finish()
        for reader in readers.withLock({ Array($0.values) }) { await reader.close() }
        // Replaced generations go in any case, and so does the current one when it is
        // this start's own generation (no later start names it) or the id was made up.
        let (current, replaced) = replies.withLock { ($0.current, $0.replaced) }
        let doomed = replaced + (deletingReplyTopic || current != Topics.replies(instance: instance) ? [current] : [])
        guard !doomed.isEmpty else { return }
        // A closed reader's handle lives on a moment, and a fetch it sent before may still be
        // answered: deleted under it, librdkafka 2.16 crashes (`ReplyTopics.deleteAfterMs`).
        try? await Task.sleep(for: .milliseconds(ReplyTopics.deleteAfterMs))
        do {
            try await provisioner.delete(doomed)
        } catch {
            logger.warning("reply topics not deleted", metadata: ["topics": "\(doomed)", "error": "\(error)"])
        }
    }

    /// Within a `send` span, whose trace context the record's headers carry to
    /// the owner (none while tracing is off).
    public func send<Command: WireCommand>(
        _ command: Command, idempotencyKey: String, deadline: Deadline
    ) async throws(RequestError) -> Command.Reply {
        let correlationID = Self.randomToken()
        let span = BusSpans.send(Command.name, topic: Command.topic, correlationID: correlationID)
        defer { span.end() }
        do {
            return try await send(
                command, idempotencyKey: idempotencyKey, deadline: deadline, correlationID: correlationID,
                headers: TraceHeaders.carrying(span.context))
        } catch {
            BusSpans.failed(span, error)
            throw error
        }
    }

    private func send<Command: WireCommand>(
        _ command: Command, idempotencyKey: String, deadline: Deadline, correlationID: String,
        headers: [KafkaHeader]
    ) async throws(RequestError) -> Command.Reply {
        let topic = Command.topic
        let started = ContinuousClock.now
        // A reply sent before this instance reads its reply topic is lost, and
        // the request would wait its whole deadline for it (a gateway restarted
        // under load answered its first polls 503 after 3 s): until the reply
        // path works, wait for it, and send nothing if it does not come in time.
        while !isReady {
            guard deadline.remaining() > .milliseconds(50) else { throw .notSent("the reply path is not ready yet") }
            try? await Task.sleep(for: .milliseconds(10))
        }
        // The reply topic is held until the request ends, so it is not deleted under it.
        let replyTo = replies.withLock { $0.hold() }
        defer { replies.withLock { $0.release(replyTo) } }
        let envelope = RequestEnvelope(
            correlationID: correlationID, idempotencyKey: idempotencyKey, replyTo: replyTo,
            deadlineMs: deadline.epochMs, sentAtMs: WallClock.nowMs(), readsEvents: readsEvents ? true : nil,
            command: command)
        let payload: [UInt8]
        do { payload = Array(try JSONEncoder().encode(envelope)) } catch {
            throw .notSent("encode: \(error)")
        }
        let waiter = ReplyWaiter(deadline: started + deadline.remaining())
        let first = waiting.withLock { table in
            table[correlationID] = waiter
            return table.count == 1
        }
        if first { waitersArrived.ring() }
        wakeReadersIfResting()
        defer { fetching.withLock { $0.requestEnded(at: .now) } }
        // Sending runs beside the wait, so the deadline bounds the whole request
        // even while the broker is away and deliveries take longer to fail.
        let key = command.partitionKey ?? idempotencyKey
        Task {
            do {
                try await producer.send(topic: topic, key: key, value: payload, partition: nil, headers: headers)
            } catch {
                let orphan = waiting.withLock { $0.removeValue(forKey: correlationID) }
                orphan?.finish(.failure(.notSent("\(error)")))
            }
        }
        let reply: ReplyWaiter.Reply
        do { reply = try await waiter.wait() } catch let error as RequestError {
            if error == .timedOut { BusMetrics.requestTimeouts[topic].increment() }
            throw error
        } catch {
            throw .unexpectedReply("\(error)")
        }
        BusMetrics.requestDuration[topic].record(since: started)
        switch reply {
        case .record(let record):
            return try Command.reply(from: record)
        case .value(let value):
            guard let typed = value as? Command.Reply else {
                throw .unexpectedReply("\(type(of: value)) answered \(Command.name)")
            }
            return typed
        }
    }

    /// A reply carried by a record this instance reads anyway (a say's message
    /// event, `EventEnvelope.answers`) ends the request waiting for it, as its
    /// reply record would; one sent by another instance finds no waiter here.
    public func answered(_ correlationID: String, by reply: any Sendable) {
        let waiter = waiting.withLock { $0.removeValue(forKey: correlationID) }
        waiter?.finish(.success(.value(reply)))
    }

    public func post<Command: WireCommand>(
        _ command: Command, idempotencyKey: String, deadline: Deadline
    ) async -> RecordDelivery {
        // No reply topic: the owner answers nothing (`CommandProcessor`).
        let correlationID = Self.randomToken()
        // The span covers the hand-over; the owner's processing is its child all the same.
        let span = BusSpans.send(Command.name, topic: Command.topic, correlationID: correlationID, oneWay: true)
        defer { span.end() }
        let envelope = RequestEnvelope(
            correlationID: correlationID, idempotencyKey: idempotencyKey, replyTo: "",
            deadlineMs: deadline.epochMs,
            sentAtMs: WallClock.nowMs(), command: command)
        let payload: [UInt8]
        do { payload = Array(try JSONEncoder().encode(envelope)) } catch {
            return .completed(RequestError.notSent("encode: \(error)"))
        }
        let delivery = producer.enqueue(
            topic: Command.topic, key: command.partitionKey ?? idempotencyKey, value: payload, partition: nil,
            headers: TraceHeaders.carrying(span.context))
        return RecordDelivery {
            do {
                try await bounded(by: deadline.remaining()) { try await delivery.wait() }
            } catch is DeadlineExceeded {
                throw RequestError.timedOut
            }
        }
    }

    private func deliver(_ record: KafkaRecord) {
        if replies.withLock({ $0.received(on: record.topic) }) {
            Task { await rotate() }
        }
        guard let reply = try? JSONDecoder().decode(ReplyHeader.self, from: Data(record.value)) else {
            logger.warning("undecodable reply", metadata: ["topic": "\(record.topic)", "offset": "\(record.offset)"])
            return
        }
        if reply.correlationID == pingID {
            if !ready.exchange(true, ordering: .acquiringAndReleasing) {
                logger.info("reply path ready", metadata: ["topic": "\(replyTopic)"])
            }
            return
        }
        if let sentAtMs = reply.sentAtMs {
            BusMetrics.replyTravel.recordNanoseconds(max(0, WallClock.nowMs() - sentAtMs) * 1_000_000)
        }
        let waiter = waiting.withLock { $0.removeValue(forKey: reply.correlationID) }
        // A reply nobody waits for: its request already timed out.
        waiter?.finish(.success(.record(record.value)))
    }

    private func expireLoop() async throws {
        while true {
            if waiting.withLock({ $0.isEmpty }) { await waitersArrived.wait() }
            try await Task.sleep(for: .milliseconds(20))
            let now = ContinuousClock.now
            let expired = waiting.withLock { table -> [ReplyWaiter] in
                let late = table.filter { $0.value.deadline <= now }
                for key in late.keys { table.removeValue(forKey: key) }
                return Array(late.values)
            }
            for waiter in expired { waiter.finish(.failure(.timedOut)) }
        }
    }

    /// Wakes the reply readers before a request is sent, if they rest: the fetch
    /// starts at once, so the reply cannot arrive before a fetch will see it.
    private func wakeReadersIfResting() {
        fetching.withLock { state in
            guard state.requestStarting(at: .now) == .wake else { return }
            for reader in readers.withLock({ Array($0.values) }) { reader.wake() }
        }
    }

    /// Rests the reply readers while no request waits (`ReplyFetching`).
    private func restLoop() async throws {
        guard settings.replyReaderQuiet > .zero else { return }
        while true {
            try await Task.sleep(for: settings.replyReaderQuiet / 2)
            fetching.withLock { state in
                let waitingNow = waiting.withLock { $0.count }
                guard state.tick(at: .now, waiting: waitingNow, ready: isReady) == .rest else { return }
                for reader in readers.withLock({ Array($0.values) }) { reader.rest() }
            }
        }
    }

    /// Sends a ping to our own reply topic until it comes back (the tail position
    /// is only fixed once the first fetch answered).
    private func pingUntilReady() async throws {
        let ping = ReplyEnvelope(correlationID: pingID, result: .success(Done()))
        let payload = Array(try JSONEncoder().encode(ping))
        while !isReady {
            try? await producer.send(topic: replyTopic, key: nil, value: payload, partition: 0)
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// A broker that lost its memory forgets our reply topic; make it again.
    private func keepTopicLoop() async throws {
        await provisioner.keep({ [self] in replyTopics }, mode: .create)
    }

    private var replyTopics: [TopicSpec] { [TopicSpecs.spec(for: replyTopic, partitions: 1)] }

    /// Moves requests to the next reply topic: made and read, by a consumer of
    /// its own, from its first record before any request names it, so no reply
    /// to it can be missed.
    private func rotate() async {
        let next = replies.withLock { $0.nextTopic }
        var made: KafkaConsumer?
        do {
            try await provisioner.createApart([TopicSpecs.spec(for: next, partitions: 1)])
            let reader = try KafkaConsumer(
                settings: settings, topics: [next], mode: .tail, pace: .replies, logger: logger)
            made = reader
            // Assigned from the new topic's end, 0: every reply to it is read.
            try await reader.start()
            readers.withLock { $0[next] = reader }
            newReader.yield(reader)
            let old = replies.withLock { $0.rotated(to: next) }
            logger.debug("reply topic replaced", metadata: ["topic": "\(next)", "previous": "\(old)"])
        } catch {
            await made?.close()
            replies.withLock { $0.rotationFailed() }
            logger.warning("reply topic not replaced yet", metadata: ["topic": "\(next)", "error": "\(error)"])
        }
    }

    /// Retires replaced reply topics once no request waits on them: their reader
    /// is closed, and the topic is deleted `ReplyTopics.deleteAfterMs` later, once
    /// no fetch of that reader can still be under way. Deleting it at once crashed
    /// the librdkafka 2.16 runtime on Tansu (a fetch answered after the deletion
    /// makes it look up a topic without a name: docs/architecture.md, "Request/reply").
    private func retireLoop() async throws {
        while true {
            try await Task.sleep(for: .seconds(1))
            let drained = replies.withLock { $0.drained() }
            for topic in drained {
                if let reader = readers.withLock({ $0.removeValue(forKey: topic) }) { await reader.close() }
                replies.withLock { $0.readerClosed(topic, atMs: WallClock.nowMs()) }
            }
            let doomed = replies.withLock { $0.deletable(atMs: WallClock.nowMs()) }
            guard !doomed.isEmpty else { continue }
            do {
                try await provisioner.delete(doomed)
                replies.withLock { $0.deleted(doomed) }
                logger.debug("replaced reply topics deleted", metadata: ["topics": "\(doomed)"])
            } catch {
                logger.warning(
                    "replaced reply topics not deleted yet", metadata: ["topics": "\(doomed)", "error": "\(error)"])
            }
        }
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next(), radix: 16) + String(generator.next(), radix: 16)
    }
}
