import Foundation
import GeoChatDomain
import GeoChatKafka
import Logging
import Synchronization

/// Sends commands to the services that own them and waits for their replies.
///
/// Every command carries a correlation id (to find its waiter), an idempotency
/// key (so retries never do a thing twice) and a deadline (after which the owner
/// drops it). Replies come back on this instance's own one-partition topic,
/// which this client reads from its end without a consumer group.
public final class KafkaCommandBus: CommandBus {
    public let replyTopic: String
    private let producer: any RecordSender
    private let provisioner: TopicProvisioner
    private let consumer: KafkaConsumer
    private let logger: Logger
    private let waiting = Mutex<[String: ReplyWaiter]>([:])
    private let ready = Atomic<Bool>(false)
    private let pingID = "ping-" + KafkaCommandBus.randomToken()
    /// Wakes the expiry loop when a request starts waiting: with none waiting
    /// the loop sleeps (an idle instance does not tick).
    private let waitersArrived = Doorbell()

    private let profile: BrokerProfile

    public init(instance: String, settings: KafkaSettings, producer: KafkaProducer, logger: Logger) throws {
        self.replyTopic = Topics.replies(instance: instance)
        self.producer = producer
        self.provisioner = TopicProvisioner(producer: producer, settings: settings, logger: logger)
        self.profile = settings.profile
        self.consumer = try KafkaConsumer(settings: settings, topics: [replyTopic], mode: .tail, pace: .interactive, logger: logger)
        self.logger = logger
    }

    /// True once a reply sent to ourselves came back: the reply path works end to end.
    public var isReady: Bool { ready.load(ordering: .acquiring) }

    /// Reads replies until cancelled. Also expires waiters whose deadline passed.
    public func run() async throws {
        // Always made by its instance, whatever `TopicsMode` says: its name is
        // the instance's (docs/operations.md: the create right on `geochat.replies.`).
        try await provisioner.ensureRetrying(replyTopics, mode: .create)
        try await consumer.start()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await self.expireLoop() }
            group.addTask { try? await self.pingUntilReady() }
            group.addTask { try? await self.keepTopicLoop() }
            if profile == .tansu { group.addTask { await self.consumer.followRecreatedTopics() } }
            for await record in consumer.records {
                deliver(record)
            }
            group.cancelAll()
        }
    }

    /// Stops reading replies. `deletingReplyTopic`: the instance's id was made
    /// up at start (no `GEOCHAT_INSTANCE_ID`), so no later process will use
    /// this topic again; it goes rather than being left behind.
    public func shutdown(deletingReplyTopic: Bool = false) async {
        await consumer.close()
        guard deletingReplyTopic else { return }
        do {
            try await provisioner.delete([replyTopic])
        } catch {
            logger.warning("reply topic not deleted", metadata: ["topic": "\(replyTopic)", "error": "\(error)"])
        }
    }

    public func send<Command: WireCommand>(
        _ command: Command, idempotencyKey: String, deadline: Deadline
    ) async throws(RequestError) -> Command.Reply {
        let topic = Command.topic
        let correlationID = Self.randomToken()
        let started = ContinuousClock.now
        let envelope = RequestEnvelope(
            correlationID: correlationID, idempotencyKey: idempotencyKey, replyTo: replyTopic,
            deadlineMs: deadline.epochMs, command: command)
        let payload: [UInt8]
        do { payload = Array(try JSONEncoder().encode(envelope)) } catch {
            throw .notSent("encode: \(error)")
        }
        // A reply sent before this instance reads its reply topic is lost, and
        // the request would wait its whole deadline for it (a gateway restarted
        // under load answered its first polls 503 after 3 s): until the reply
        // path works, wait for it, and send nothing if it does not come in time.
        while !isReady {
            guard deadline.remaining() > .milliseconds(50) else { throw .notSent("the reply path is not ready yet") }
            try? await Task.sleep(for: .milliseconds(10))
        }
        let waiter = ReplyWaiter(deadline: started + deadline.remaining())
        let first = waiting.withLock { table in
            table[correlationID] = waiter
            return table.count == 1
        }
        if first { waitersArrived.ring() }
        // Sending runs beside the wait, so the deadline bounds the whole request
        // even while the broker is away and deliveries take longer to fail.
        let key = command.partitionKey ?? idempotencyKey
        Task {
            do {
                try await producer.send(topic: topic, key: key, value: payload, partition: nil)
            } catch {
                let orphan = waiting.withLock { $0.removeValue(forKey: correlationID) }
                orphan?.finish(.failure(.notSent("\(error)")))
            }
        }
        let record: [UInt8]
        do { record = try await waiter.wait() } catch let error as RequestError {
            if error == .timedOut { BusMetrics.requestTimeouts[topic].increment() }
            throw error
        } catch {
            throw .unexpectedReply("\(error)")
        }
        BusMetrics.requestDuration[topic].record(since: started)
        return try Command.reply(from: record)
    }

    private func deliver(_ record: KafkaRecord) {
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
        let waiter = waiting.withLock { $0.removeValue(forKey: reply.correlationID) }
        // A reply nobody waits for: its request already timed out.
        waiter?.finish(.success(record.value))
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
        await provisioner.keep(replyTopics, mode: .create)
    }

    private var replyTopics: [TopicSpec] { [TopicSpecs.spec(for: replyTopic, partitions: 1)] }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next(), radix: 16) + String(generator.next(), radix: 16)
    }
}
