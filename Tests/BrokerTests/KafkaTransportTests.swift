import Foundation
import GeoChatBus
import GeoChatDomain
import Logging
import Synchronization
import Testing
import XCTest

@testable import GeoChatKafka

/// These talk to a real Kafka-protocol broker (Tansu, started by deploy/test.sh).
final class KafkaTransportTests: XCTestCase {
    var settings: KafkaSettings!
    let logger = Logger(label: "kafka-tests")

    override func setUpWithError() throws {
        guard let brokers = ProcessInfo.processInfo.environment["GEOCHAT_TEST_KAFKA_BROKERS"] else {
            if ProcessInfo.processInfo.environment["CI"] != nil {
                XCTFail("GEOCHAT_TEST_KAFKA_BROKERS is not set: run these through deploy/test.sh")
            }
            throw XCTSkip("GEOCHAT_TEST_KAFKA_BROKERS is not set")
        }
        settings = KafkaSettings(
            brokers: brokers, clientID: "test-\(UUID().uuidString.prefix(8))", partitions: 4, sessionTimeoutMs: 2000)
    }

    func uniqueTopic(_ name: String) -> String { "test.\(name).\(UUID().uuidString.prefix(8))" }

    func testTailConsumerSeesEveryRecordInKeyOrder() async throws {
        let topic = uniqueTopic("tail")
        let producer = try KafkaProducer(settings: settings, logger: logger)
        defer { producer.close() }
        try await TopicProvisioner(producer: producer, settings: settings, logger: logger).ensureRetrying([
            TopicSpec(name: topic, retention: .time(milliseconds: 3_600_000))
        ])
        let consumer = try KafkaConsumer(
            settings: settings, topics: [topic], mode: .tail, pace: .interactive, logger: logger)
        try await consumer.start()
        for i in 0..<40 {
            try await producer.send(topic: topic, key: "room-\(i % 4)", value: Array("\(i)".utf8), partition: nil)
        }
        var byKey: [String: [Int]] = [:]
        var count = 0
        for await record in consumer.records {
            byKey[record.keyString!, default: []].append(Int(String(decoding: record.value, as: UTF8.self))!)
            count += 1
            if count == 40 { break }
        }
        await consumer.close()
        XCTAssertEqual(byKey.count, 4)
        for (key, values) in byKey {
            let k = Int(key.dropFirst(5))!
            XCTAssertEqual(values, Array(stride(from: k, to: 40, by: 4)), "records of one key keep their order")
        }
    }

    /// Record headers survive the broker as written, in order (a record with a
    /// key and one without); a record written without any reads back without.
    func testHeadersTravelWithTheirRecord() async throws {
        let topic = uniqueTopic("headers")
        let producer = try KafkaProducer(settings: settings, logger: logger)
        defer { producer.close() }
        try await TopicProvisioner(producer: producer, settings: settings, logger: logger).ensureRetrying([
            TopicSpec(name: topic, retention: .time(milliseconds: 3_600_000))
        ])
        let consumer = try KafkaConsumer(
            settings: settings, topics: [topic], mode: .tail, pace: .interactive, logger: logger)
        try await consumer.start()
        let headers = [
            KafkaHeader("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            KafkaHeader("tracestate", "geochat=1"), KafkaHeader(name: "empty", value: []),
        ]
        try await producer.send(topic: topic, key: "room-1", value: Array("a".utf8), partition: 0, headers: headers)
        try await producer.send(topic: topic, key: nil, value: Array("b".utf8), partition: 0, headers: headers)
        try await producer.send(topic: topic, key: "room-1", value: Array("c".utf8), partition: 0)
        var read: [KafkaRecord] = []
        for await record in consumer.records {
            read.append(record)
            if read.count == 3 { break }
        }
        await consumer.close()
        XCTAssertEqual(read.map { String(decoding: $0.value, as: UTF8.self) }, ["a", "b", "c"])
        XCTAssertEqual(read[0].headers, headers)
        XCTAssertEqual(read[0].keyString, "room-1")
        XCTAssertEqual(read[1].headers, headers)
        XCTAssertNil(read[1].key)
        XCTAssertEqual(read[1].header("traceparent"), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        XCTAssertEqual(read[2].headers, [])
    }

    func testGroupCommitsOnlyWhatWasProcessed() async throws {
        let topic = uniqueTopic("commit")
        let group = "test-group-\(UUID().uuidString.prefix(8))"
        let producer = try KafkaProducer(settings: settings, logger: logger)
        defer { producer.close() }
        try await TopicProvisioner(producer: producer, settings: settings, logger: logger).ensureRetrying([
            TopicSpec(name: topic, partitions: 1, retention: .time(milliseconds: 3_600_000))
        ])
        for i in 0..<10 { try await producer.send(topic: topic, key: nil, value: Array("\(i)".utf8), partition: 0) }

        let first = try KafkaConsumer(
            settings: settings, topics: [topic], mode: .group(group), pace: .interactive, logger: logger)
        try await first.start()
        var iterator = first.records.makeAsyncIterator()
        for expected in 0..<5 {
            let next = await iterator.next()
            let record = try XCTUnwrap(next)
            XCTAssertEqual(String(decoding: record.value, as: UTF8.self), "\(expected)")
            first.markProcessed(record)
        }
        _ = await iterator.next()  // read but never processed: must be delivered again
        await first.close()

        let second = try KafkaConsumer(
            settings: settings, topics: [topic], mode: .group(group), pace: .interactive, logger: logger)
        try await second.start()
        var again = second.records.makeAsyncIterator()
        let next = await again.next()
        let record = try XCTUnwrap(next)
        XCTAssertEqual(String(decoding: record.value, as: UTF8.self), "5")
        await second.close()
    }

    func testTwoGroupMembersShareThePartitions() async throws {
        let topic = uniqueTopic("share")
        let group = "test-share-\(UUID().uuidString.prefix(8))"
        let producer = try KafkaProducer(settings: settings, logger: logger)
        defer { producer.close() }
        try await TopicProvisioner(producer: producer, settings: settings, logger: logger).ensureRetrying([
            TopicSpec(name: topic, partitions: 4, retention: .time(milliseconds: 3_600_000))
        ])
        let a = try KafkaConsumer(
            settings: settings, topics: [topic], mode: .group(group), pace: .interactive, logger: logger)
        let b = try KafkaConsumer(
            settings: settings, topics: [topic], mode: .group(group), pace: .interactive, logger: logger)
        try await a.start()
        try await b.start()
        // Assignments are handed out while the members poll.
        let pollA = Task { for await _ in a.records {} }
        let pollB = Task { for await _ in b.records {} }
        var shared = false
        for _ in 0..<150 {
            let pa = a.assignment().flatMap(\.partitions)
            let pb = b.assignment().flatMap(\.partitions)
            if !pa.isEmpty, !pb.isEmpty, Set(pa).isDisjoint(with: pb), Set(pa + pb) == [0, 1, 2, 3] {
                shared = true
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTAssertTrue(shared, "a: \(a.assignment()), b: \(b.assignment())")
        pollA.cancel()
        pollB.cancel()
        await a.close()
        await b.close()
    }

    func testRequestReplyAnswersRefusesAndTimesOut() async throws {
        let rig = try await ProbeRig.start(settings: settings, logger: logger) { probe, _ in
            switch probe.value {
            case 404: throw ProtocolError.noSuchChat
            case 999: try await Task.sleep(for: .seconds(2))
            default: break
            }
        }
        defer { rig.producer.close() }
        let bus = rig.bus
        XCTAssertTrue(bus.isReady)

        // The group's first assignment takes a moment: retry the first request.
        var answer: Probe.Answer?
        for _ in 0..<10 where answer == nil {
            answer = try? await bus.send(Probe(value: 7), idempotencyKey: "k7", within: .seconds(2))
        }
        XCTAssertEqual(answer, Probe.Answer(value: 14, idempotencyKey: "k7"))

        do {
            _ = try await bus.send(Probe(value: 404), idempotencyKey: "k404", within: .seconds(5))
            XCTFail("expected a refusal")
        } catch {
            XCTAssertEqual(error, .refused(.noSuchChat))
        }

        // A handler that runs out of time answers "outcome unknown" before the requester gives up.
        var started = ContinuousClock.now
        do {
            _ = try await bus.send(Probe(value: 999), idempotencyKey: "k999", within: .milliseconds(500))
            XCTFail("expected no answer in time")
        } catch {
            XCTAssertEqual(error, .refused(.outcomeUnknown))
        }
        XCTAssertLessThan(ContinuousClock.now - started, .milliseconds(500), "answered within the deadline")

        // Nobody reads the topic: the requester gives up at its deadline.
        started = ContinuousClock.now
        do {
            _ = try await bus.send(Unanswered(), idempotencyKey: "k-none", within: .milliseconds(500))
            XCTFail("expected a timeout")
        } catch {
            XCTAssertEqual(error, .timedOut)
        }
        XCTAssertLessThan(ContinuousClock.now - started, .milliseconds(1500), "a timeout answers at its deadline")
        await rig.stop()
    }
}

extension KafkaTransportTests {
    /// Reply readers rest while no request waits (`ReplyFetching`) and wake before the next
    /// request is sent: every request after a rest is answered, as promptly as the others (a
    /// resumed librdkafka pause waited up to a second for its fetcher's next round).
    func testRestingReplyReadersWakeForTheNextRequest() async throws {
        settings.replyReaderQuiet = .milliseconds(200)
        let rig = try await ProbeRig.start(settings: settings, logger: logger) { _, _ in }
        defer { rig.producer.close() }
        let bus = rig.bus
        let answer = await rig.warmUp()
        XCTAssertEqual(answer?.value, 2)

        var afterRest: [Duration] = []
        for round in 0..<6 {
            try await Task.sleep(for: .milliseconds(500))  // past the quiet: the readers rest
            let started = ContinuousClock.now
            let reply = try await bus.send(
                Probe(value: 10 + round), idempotencyKey: "rest-\(round)", within: .seconds(3))
            afterRest.append(ContinuousClock.now - started)
            XCTAssertEqual(reply, Probe.Answer(value: 2 * (10 + round), idempotencyKey: "rest-\(round)"))
            for burst in 0..<3 {  // and while awake
                let value = 100 * round + burst
                let awake = try await bus.send(
                    Probe(value: value), idempotencyKey: "awake-\(value)", within: .seconds(3))
                XCTAssertEqual(awake.value, 2 * value)
            }
        }
        // Two fetch waits of 10 ms and the handler: far under the second a missed wake costs.
        XCTAssertLessThan(afterRest.max()!, .milliseconds(700), "requests after a rest: \(afterRest)")
        await rig.stop()
    }
}

extension KafkaTransportTests {
    /// A reply another record carries (`CommandContext.answeredBy`: a say's message event, which
    /// the gateway reads anyway): while that record reached the broker no reply record goes, and
    /// the requester's `answered` ends the request; when it did not, the reply record goes after all.
    func testAReplyCarriedByAnotherRecordSendsNoReplyRecord() async throws {
        let carried = CorrelationIDs()
        let rig = try await ProbeRig.start(settings: settings, logger: logger) { probe, context in
            switch probe.value {
            case 1000..<2000:
                carried.append(context.correlationID)
                context.answeredBy(.completed(nil))
            case 2000..<3000:
                context.answeredBy(.completed(KafkaError.delivery("the carrier was refused")))
            default: break
            }
        }
        defer { rig.producer.close() }
        let bus = rig.bus
        let answer = await rig.warmUp()
        XCTAssertEqual(answer?.value, 2)

        // The carrier reached the broker and nobody passes it on: no reply record comes.
        do {
            _ = try await bus.send(Probe(value: 1000), idempotencyKey: "k1000", within: .milliseconds(800))
            XCTFail("a reply record was sent beside its carrier")
        } catch {
            XCTAssertEqual(error, .timedOut)
        }
        XCTAssertEqual(carried.all.count, 1, "the handler ran")

        // The carrier did not reach the broker: the reply record answers.
        let fallback = try await bus.send(Probe(value: 2000), idempotencyKey: "k2000", within: .seconds(3))
        XCTAssertEqual(fallback, Probe.Answer(value: 4000, idempotencyKey: "k2000"))

        // The requester reads the carrier and passes its answer on: the request ends with it.
        let request = Task { try await bus.send(Probe(value: 1001), idempotencyKey: "k1001", within: .seconds(3)) }
        for _ in 0..<300 where carried.all.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        let correlationID = try XCTUnwrap(carried.all.last)
        bus.answered(correlationID, by: Probe.Answer(value: 2002, idempotencyKey: "carried"))
        let carriedAnswer = try await request.value
        XCTAssertEqual(carriedAnswer, Probe.Answer(value: 2002, idempotencyKey: "carried"))
        await rig.stop()
    }
}

/// Correlation ids a handler saw, in order.
final class CorrelationIDs: Sendable {
    private let ids = Mutex<[String]>([])
    func append(_ id: String) { ids.withLock { $0.append(id) } }
    var all: [String] { ids.withLock { $0 } }
}

/// A requester's bus and an owner that answers `Probe` (twice its value, after `check`), on the
/// broker: the request/reply tests' setting. `Unanswered`'s topic exists; nobody reads it.
struct ProbeRig {
    let producer: KafkaProducer
    let bus: KafkaCommandBus
    let owner: KafkaConsumer
    let tasks: [@Sendable () -> Void]

    static func start(
        settings: KafkaSettings, logger: Logger,
        check: @escaping @Sendable (Probe, CommandContext) async throws -> Void
    ) async throws -> ProbeRig {
        let producer = try KafkaProducer(settings: settings, logger: logger)
        try await TopicProvisioner(producer: producer, settings: settings, logger: logger).ensureRetrying(
            [Probe.topic, Unanswered.topic].map { TopicSpec(name: $0, retention: .time(milliseconds: 3_600_000)) })
        let bus = try KafkaCommandBus(
            instance: "test-\(UUID().uuidString.prefix(8))", settings: settings, producer: producer, logger: logger)
        let busTask = Task { try await bus.run() }
        let owner = try KafkaConsumer(
            settings: settings, topics: [Probe.topic], mode: .group("owner-\(UUID())"), pace: .interactive,
            logger: logger)
        try await owner.start()
        var handlers = CommandHandlers(topic: Probe.topic)
        handlers.on(Probe.self) { probe, context in
            try await check(probe, context)
            return Probe.Answer(value: probe.value * 2, idempotencyKey: context.idempotencyKey)
        }
        let processor = CommandProcessor(consumer: owner, producer: producer, handlers: handlers, logger: logger)
        let ownerTask = Task { await processor.run() }
        for _ in 0..<100 where !bus.isReady { try await Task.sleep(for: .milliseconds(100)) }
        return ProbeRig(
            producer: producer, bus: bus, owner: owner, tasks: [{ busTask.cancel() }, { ownerTask.cancel() }])
    }

    /// The group's first assignment takes a moment: the first request, retried until answered.
    func warmUp() async -> Probe.Answer? {
        var answer: Probe.Answer?
        for _ in 0..<10 where answer == nil {
            answer = try? await bus.send(Probe(value: 1), idempotencyKey: "warm-up", within: .seconds(2))
        }
        return answer
    }

    func stop() async {
        for cancel in tasks { cancel() }
        await owner.close()
        await bus.shutdown()
    }
}

/// A command of the tests' own, on a topic of this test run's own.
struct Probe: WireCommand {
    struct Answer: Codable, Sendable, Equatable {
        var value: Int
        var idempotencyKey: String
    }
    typealias Reply = Answer
    static let name = "probe"
    static let topic = "geochat.test.probe." + UUID().uuidString.prefix(8).lowercased()
    var value: Int
    var partitionKey: String? { String(value) }
}

/// A command on a topic nobody reads.
struct Unanswered: WireCommand {
    typealias Reply = Done
    static let name = "unanswered"
    static let topic = "geochat.test.unanswered." + UUID().uuidString.prefix(8).lowercased()
    var partitionKey: String? { nil }
}

private let testBrokers = ProcessInfo.processInfo.environment["GEOCHAT_TEST_KAFKA_BROKERS"]

/// Topic provisioning against the broker (GEOCHAT_TEST_KAFKA_BROKERS, as above).
@Suite(.enabled(if: testBrokers != nil, "GEOCHAT_TEST_KAFKA_BROKERS is not set"))
struct TopicProvisionerTests {
    let logger = Logger(label: "kafka-tests")

    @Test func ensuringATopicTwiceKeepsItWithTheAskedPartitions() throws {
        let settings = KafkaSettings(
            brokers: testBrokers!, clientID: "test-\(UUID().uuidString.prefix(8))", partitions: 4,
            sessionTimeoutMs: 2000)
        let topic = "test.twice.\(UUID().uuidString.prefix(8))"
        let producer = try KafkaProducer(settings: settings, logger: logger)
        defer { producer.close() }
        let provisioner = TopicProvisioner(producer: producer, settings: settings, logger: logger)
        let partitions = { try producer.administer { try $0.partitionCount(topic, timeoutMs: 5000) } }

        try provisioner.ensure([TopicSpec(name: topic, partitions: 3, retention: .compacted)])
        #expect(try partitions() == 3)
        // Another instance starting: "already exists" is success, and nothing changes.
        try provisioner.ensure([TopicSpec(name: topic, partitions: 3, retention: .compacted)])
        #expect(try partitions() == 3)
        // Not even when it would ask for another count (the default here, 4).
        try provisioner.ensure([TopicSpec(name: topic, retention: .compacted)])
        #expect(try partitions() == 3)
    }

    @Test func verifyingNamesTheMissingTopicsAndCreatesNothing() throws {
        let settings = KafkaSettings(
            brokers: testBrokers!, clientID: "test-\(UUID().uuidString.prefix(8))", partitions: 2,
            sessionTimeoutMs: 2000)
        let present = TopicSpec(
            name: "test.present.\(UUID().uuidString.prefix(8))", retention: .time(milliseconds: 60_000))
        let missing = TopicSpec(
            name: "test.missing.\(UUID().uuidString.prefix(8))", retention: .time(milliseconds: 60_000))
        let producer = try KafkaProducer(settings: settings, logger: logger)
        defer { producer.close() }
        let provisioner = TopicProvisioner(producer: producer, settings: settings, logger: logger)
        try provisioner.ensure([present], mode: .create)
        try provisioner.ensure([present], mode: .verify)
        #expect(throws: KafkaError.admin("topics missing (GEOCHAT_KAFKA_TOPICS=verify): \(missing.name)")) {
            try provisioner.ensure([present, missing], mode: .verify)
        }
        #expect(throws: KafkaError.self, "verifying did not create it") {
            try producer.administer { try $0.partitionCount(missing.name, timeoutMs: 2000) }
        }
    }
}

extension KafkaTransportTests {
    /// A requester replaces its reply topic after so many replies (*tansu*) and deletes each
    /// replaced one once its reader has been closed a while: requests go on being answered
    /// throughout, and the process lives (librdkafka 2.16 crashed when a topic one of its
    /// consumers still fetched was deleted).
    func testReplacedReplyTopicsAreDeletedWhileRequestsGoOn() async throws {
        settings.profile = .tansu
        settings.replyTopicRecords = 5
        let rig = try await ProbeRig.start(settings: settings, logger: logger) { _, _ in }
        defer { rig.producer.close() }
        let warm = await rig.warmUp()
        XCTAssertEqual(warm?.value, 2)
        let first = rig.bus.replyTopic
        let instanceTopics = String(first[..<first.range(of: ".r", options: .backwards)!.lowerBound])
        var named: Set<String> = [first]
        var value = 0
        let replacing = ContinuousClock.now + .seconds(40)
        while named.count < 4, ContinuousClock.now < replacing {
            let reply = try await rig.bus.send(
                Probe(value: value), idempotencyKey: "rotate-\(value)", within: .seconds(3))
            XCTAssertEqual(reply.value, 2 * value)
            value += 1
            named.insert(rig.bus.replyTopic)
            try await Task.sleep(for: .milliseconds(50))  // a replacement makes a topic and a reader
        }
        XCTAssertGreaterThanOrEqual(named.count, 4, "replaced every 5 replies: \(named.sorted())")
        let provisioner = TopicProvisioner(producer: rig.producer, settings: settings, logger: logger)
        // Closed readers' topics go `ReplyTopics.deleteAfterMs` later; requests meanwhile are answered.
        let deadline = ContinuousClock.now + .seconds(20)
        var left = try await provisioner.topics(named: instanceTopics)
        while left.count > 2, ContinuousClock.now < deadline {
            let reply = try await rig.bus.send(
                Probe(value: value), idempotencyKey: "after-\(value)", within: .seconds(3))
            XCTAssertEqual(reply.value, 2 * value)
            value += 1
            try await Task.sleep(for: .milliseconds(500))
            left = try await provisioner.topics(named: instanceTopics)
        }
        XCTAssertLessThanOrEqual(left.count, 2, "the current topic and at most the one replaced last: \(left.sorted())")
        XCTAssertTrue(left.contains(rig.bus.replyTopic))
        await rig.stop()
    }
}
