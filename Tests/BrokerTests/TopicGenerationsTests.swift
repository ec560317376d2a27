import Foundation
import GeoChatDomain
import Logging
import XCTest

@testable import GeoChatKafka

/// Names and instants of rotating topics (no broker needed).
final class TopicGenerationNameTests: XCTestCase {
    let generations = TopicGenerations(periodMs: 60_000, rotates: Topics.rotates)

    func testARotatingTopicIsWrittenToItsGenerationOfTheClock() {
        XCTAssertEqual(generations.generation(atMs: 119_999), 1)
        XCTAssertEqual(generations.generation(atMs: 120_000), 2)
        XCTAssertEqual(generations.startMs(of: 2), 120_000)
        XCTAssertEqual(generations.physical(Topics.messagingCommands, atMs: 120_000), "geochat.messaging.commands.g2")
    }

    func testStateAdminAndReplyTopicsKeepTheirNames() {
        for topic in [
            Topics.settings, Topics.bans, Topics.adminCommands, Topics.expiryCommands,
            Topics.replies(instance: "gateway-1"),
        ] {
            XCTAssertEqual(generations.physical(topic, generation: 7), topic)
            XCTAssertEqual(generations.logical(topic).topic, topic)
            XCTAssertNil(generations.logical(topic).generation)
        }
    }

    func testAGenerationExpiresOnceNoReaderCanHoldIt() {
        XCTAssertEqual(generations.retentionMs, 240_000, "four periods")
        XCTAssertEqual(
            TopicGenerations(periodMs: 10_000, rotates: Topics.rotates).retentionMs, 120_000, "two minutes at least")
        let names =
            (0...10).map { "geochat.messages.events.g\($0)" } + [
                "geochat.settings", "geochat.replies.gateway-1.r3", "geochat.settings.g1", "test.other.g1",
            ]
        // At the start of generation 10, generation 5 ended 240 s ago.
        XCTAssertEqual(
            generations.expired(names, atMs: generations.startMs(of: 10)),
            (0...5).map { "geochat.messages.events.g\($0)" })
        XCTAssertEqual(generations.expired(names, atMs: generations.startMs(of: 10) - 1).count, 5)
    }

    func testAGenerationsConsumerGroupExpiresWithIt() {
        XCTAssertEqual(TopicGenerations.group("geochat-rooms", generation: 7), "geochat-rooms.g7")
        let groups =
            (0...10).map { TopicGenerations.group("geochat-rooms", generation: $0) } + [
                "geochat-rooms", "geochat-rooms.gx", ".g3", "geochat-messaging.g-1", "geochat.g1.other",
            ]
        // As for topics: at the start of generation 10, generation 5 ended 240 s ago.
        XCTAssertEqual(
            generations.expiredGroups(groups, atMs: generations.startMs(of: 10)),
            (0...5).map { "geochat-rooms.g\($0)" })
        XCTAssertEqual(generations.expiredGroups(groups, atMs: generations.startMs(of: 10) - 1).count, 5)
    }

    func testAProcessNamesItsOwnGroupsOfTheGenerationsExpiredSinceItsLastPrune() {
        // At the start of generation 10, generation 5 is the newest past its retention.
        let now = generations.startMs(of: 10)
        let newest = generations.newestExpired(atMs: now)
        XCTAssertEqual(newest, 5)
        XCTAssertEqual(
            generations.expiredGroups(of: ["a", "b"], after: 3, through: newest), ["a.g4", "b.g4", "a.g5", "b.g5"])
        XCTAssertEqual(generations.expiredGroups(of: ["a"], after: 5, through: newest), [], "nothing new since")
        // A first prune (or one long after the last) names the last `window` only.
        XCTAssertEqual(generations.expiredGroups(of: ["a"], after: nil, through: newest, window: 2), ["a.g4", "a.g5"])
        XCTAssertEqual(generations.expiredGroups(of: ["a"], after: 0, through: newest, window: 2), ["a.g4", "a.g5"])
        XCTAssertEqual(generations.expiredGroups(of: [], after: nil, through: newest), [])
    }

    func testAPhysicalNameGivesBackItsTopicAndGeneration() {
        XCTAssertEqual(generations.logical("geochat.messages.events.g29000123").topic, Topics.messageEvents)
        XCTAssertEqual(generations.logical("geochat.messages.events.g29000123").generation, 29_000_123)
        // Only a rotating topic's own suffix counts: a reply topic's generation is not one.
        for name in ["geochat.replies.gateway-1.r3", "geochat.settings.g4", "geochat.presence.gx"] {
            XCTAssertEqual(generations.logical(name).topic, name)
            XCTAssertNil(generations.logical(name).generation)
        }
    }
}

/// Rotating topics on the real broker: producers move to the next generation on
/// the clock, consumers follow without losing or reordering a key's records.
final class TopicGenerationTests: XCTestCase {
    let logger = Logger(label: "generation-tests")

    func testGroupAndTailConsumersReadEveryRecordInKeyOrderAcrossSwitches() async throws {
        let topic = "test.rotating.\(UUID().uuidString.prefix(8))"
        // 12 s of records over 8 keys: three switches or more.
        let count = 600
        let (groupRead, tailRead) = try await readAcrossGenerations(
            of: topic, TopicGenerations(periodMs: 4000, rotates: { $0 == topic }), count: count, partitions: 4)
        for (name, read) in [("group", groupRead), ("tail", tailRead)] {
            XCTAssertEqual(read.values.count, count, "\(name): every record once")
            XCTAssertEqual(Set(read.values).count, count, "\(name): no record twice")
            for key in 0..<8 {
                let ofKey = read.values.filter { $0 % 8 == key }
                XCTAssertEqual(ofKey, ofKey.sorted(), "\(name): key \(key) in order")
            }
            XCTAssertGreaterThanOrEqual(read.generations.count, 3, "\(name) read \(read.generations.sorted())")
        }
        XCTAssertTrue(groupRead.topics == [topic] && tailRead.topics == [topic], "records carry the logical topic")
    }

    /// Generations are deleted while producers and readers of later ones run:
    /// nothing read is lost, and no client crashes (librdkafka 2.16 did when a
    /// consumer still fetched a deleted topic: this process would die).
    func testOldGenerationsAreDeletedWhileTheNextOnesAreRead() async throws {
        let topic = "test.pruned.\(UUID().uuidString.prefix(8))"
        let generations = TopicGenerations(periodMs: 3000, retentionMs: 6000, rotates: { $0 == topic })
        // 16 s of records over 8 keys: five switches, and the first generations past
        // their retention while the readers go on.
        let count = 800
        let groupName = "test-pruned-\(UUID().uuidString.prefix(8))"
        var left: [String] = []
        var groupsLeft: [String] = []
        let (groupRead, tailRead) = try await readAcrossGenerations(
            of: topic, generations, count: count, partitions: 2, group: groupName
        ) { provisioner in
            // The keeper deletes once a generation: give it two more.
            try await Task.sleep(for: .milliseconds(2 * generations.periodMs))
            left = try await provisioner.topics(named: topic)
            groupsLeft = try await provisioner.groups(named: groupName + ".")
        }
        for (name, read) in [("group", groupRead), ("tail", tailRead)] {
            XCTAssertEqual(read.values.count, count, "\(name): every record once")
            XCTAssertEqual(Set(read.values).count, count, "\(name): no record twice")
            XCTAssertGreaterThanOrEqual(read.generations.count, 5, "\(name) read \(read.generations.sorted())")
        }
        let oldest = left.compactMap { generations.logical($0).generation }.min() ?? .max
        let read = groupRead.generations.union(tailRead.generations)
        XCTAssertGreaterThan(oldest, read.min() ?? 0, "the first generations read are gone from the broker: \(left)")
        XCTAssertTrue(
            generations.expired(left, atMs: wallClockMs() - 2 * generations.periodMs).isEmpty,
            "no generation long past its retention is left: \(left.sorted())")
        XCTAssertFalse(groupsLeft.isEmpty, "the group of the generation being read is listed")
        XCTAssertTrue(
            generations.expiredGroups(groupsLeft, atMs: wallClockMs() - 2 * generations.periodMs).isEmpty,
            "no group of a generation long past its retention is left: \(groupsLeft.sorted())")
    }

    /// An expired generation's consumer group is deleted by name before its
    /// topic: once the topic is gone, Tansu no longer lists the group but
    /// keeps its state for ever.
    func testAnExpiredGenerationsGroupIsDeletedWithIt() async throws {
        let topic = "test.groups.\(UUID().uuidString.prefix(8))"
        let generations = TopicGenerations(periodMs: 5000, retentionMs: 1000, rotates: { $0 == topic })
        let settings = try Self.settings(generations, partitions: 1)
        let producer = try KafkaProducer(settings: settings, logger: logger)
        defer { producer.close() }
        let provisioner = TopicProvisioner(producer: producer, settings: settings, logger: logger)
        let spec = [TopicSpec(name: topic, retention: .time(milliseconds: 3_600_000))]
        // The record is written and read within one generation (no keeper makes the next one).
        let remaining = generations.startMs(of: generations.generation(atMs: wallClockMs()) + 1) - wallClockMs()
        if remaining < 3500 { try await Task.sleep(for: .milliseconds(remaining + 50)) }
        try await provisioner.ensureRetrying(spec)
        let generation = generations.generation(atMs: wallClockMs())
        let group = "test-groups-\(UUID().uuidString.prefix(8))"
        // A member reads a record of this generation and commits it: the broker lists its group.
        let consumer = try KafkaConsumer(
            settings: settings, topics: [topic], mode: .group(group), pace: .interactive, logger: logger)
        try await consumer.start()
        for _ in 0..<100 where !consumer.holdsPartitions { try await Task.sleep(for: .milliseconds(100)) }
        try await producer.send(topic: topic, key: "k", value: Array("1".utf8), partition: nil)
        var records = consumer.records.makeAsyncIterator()
        guard let record = await records.next() else { return XCTFail("the record was not read") }
        XCTAssertEqual(record.generation, generation)
        consumer.markProcessed(record)
        try await Task.sleep(for: .seconds(1))  // the offset committed (every 500 ms)
        await consumer.close()
        let named = TopicGenerations.group(group, generation: generation)
        let listed = try await provisioner.groups(named: group)
        XCTAssertEqual(listed, [named])
        // A member of another group joins and gets nothing: its group has no offsets, and is not listed.
        let idleGroup = "test-idle-\(UUID().uuidString.prefix(8))"
        let idle = try KafkaConsumer(
            settings: settings, topics: [topic], mode: .group(idleGroup), pace: .interactive, logger: logger)
        try await idle.start()
        for _ in 0..<100 where !idle.holdsPartitions { try await Task.sleep(for: .milliseconds(100)) }
        await idle.close()
        let idleListed = try await provisioner.groups(named: idleGroup)
        XCTAssertEqual(idleListed, [])

        // Once the generation is past its retention, a prune deletes both groups, then the topic:
        // the listed one found by listing, the idle one by its name.
        try await Task.sleep(for: .milliseconds(generations.startMs(of: generation + 1) + 1100 - wallClockMs()))
        let pruned = await provisioner.pruneGenerations(
            of: spec, generations, groups: [idleGroup], after: nil,
            through: generations.newestExpired(atMs: wallClockMs()))
        // (Tansu answers a group it never had as deleted too: the first prune names a window of generations.)
        let idleNamed = TopicGenerations.group(idleGroup, generation: generation)
        XCTAssertTrue(Set(pruned.groups ?? []).isSuperset(of: [named, idleNamed]), "\(pruned.groups ?? [])")
        XCTAssertTrue(pruned.topics.contains(generations.physical(topic, generation: generation)), "\(pruned)")
        let groupsLeft = try await provisioner.groups(named: group)
        XCTAssertEqual(groupsLeft, [])
    }

    typealias Read = (values: [Int], generations: Set<Int64>, topics: Set<String>)

    /// `count` records over 8 keys, one every 20 ms, to a rotating topic that a keeper provisions
    /// (and prunes), read by a group member and a tail reader that follow its generations.
    /// `whileReading` runs once both have read them all, with the keeper and the readers still on.
    private func readAcrossGenerations(
        of topic: String, _ generations: TopicGenerations, count: Int, partitions: Int,
        group groupName: String = "test-rotating-\(UUID().uuidString.prefix(8))",
        whileReading: (TopicProvisioner) async throws -> Void = { _ in }
    ) async throws -> (group: Read, tail: Read) {
        let settings = try Self.settings(generations, partitions: partitions)
        let producer = try KafkaProducer(settings: settings, logger: logger)
        defer { producer.close() }
        let provisioner = TopicProvisioner(producer: producer, settings: settings, logger: logger)
        let spec = [TopicSpec(name: topic, retention: .time(milliseconds: 3_600_000))]
        try await provisioner.ensureRetrying(spec)
        let keeping = Task { await provisioner.keep(spec, every: .milliseconds(300)) }
        defer { keeping.cancel() }

        let group = try KafkaConsumer(
            settings: settings, topics: [topic], mode: .group(groupName),
            pace: .interactive, logger: logger)
        let tail = try KafkaConsumer(
            settings: settings, topics: [topic], mode: .tail, pace: .interactive, logger: logger)
        try await group.start()
        try await tail.start()
        XCTAssertTrue(group.rotates)
        let following = [Task { await group.followGenerations() }, Task { await tail.followGenerations() }]
        defer { for task in following { task.cancel() } }
        for _ in 0..<100 where !group.holdsPartitions { try await Task.sleep(for: .milliseconds(100)) }

        let sending = Task {
            for i in 0..<count {
                try await producer.send(topic: topic, key: "k\(i % 8)", value: Array("\(i)".utf8), partition: nil)
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        // A consumer that stops handing out records would hang the read: close both after a minute.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            await group.close()
            await tail.close()
        }
        defer { watchdog.cancel() }
        async let byGroup = Self.read(count, from: group, marking: true)
        async let byTail = Self.read(count, from: tail, marking: false)
        let (groupRead, tailRead) = await (byGroup, byTail)
        try await sending.value
        try await whileReading(provisioner)
        await group.close()
        await tail.close()
        return (groupRead, tailRead)
    }

    /// The test broker's settings with `generations`, as the `tansu` profile has them (skips without a broker).
    private static func settings(_ generations: TopicGenerations, partitions: Int) throws -> KafkaSettings {
        guard let brokers = ProcessInfo.processInfo.environment["GEOCHAT_TEST_KAFKA_BROKERS"] else {
            if ProcessInfo.processInfo.environment["CI"] != nil { XCTFail("GEOCHAT_TEST_KAFKA_BROKERS is not set") }
            throw XCTSkip("GEOCHAT_TEST_KAFKA_BROKERS is not set")
        }
        var settings = KafkaSettings(
            brokers: brokers, clientID: "test-\(UUID().uuidString.prefix(8))", partitions: partitions,
            sessionTimeoutMs: 2000)
        settings.profile = .tansu
        settings.messageTimeoutMs = 1000
        settings.generations = generations
        return settings
    }

    private static func read(_ count: Int, from consumer: KafkaConsumer, marking: Bool) async -> Read {
        var values: [Int] = []
        var generations: Set<Int64> = []
        var topics: Set<String> = []
        var iterator = consumer.records.makeAsyncIterator()
        while values.count < count, let record = await iterator.next() {
            values.append(Int(String(decoding: record.value, as: UTF8.self))!)
            if let generation = record.generation { generations.insert(generation) }
            topics.insert(record.topic)
            if marking { consumer.markProcessed(record) }
        }
        return (values, generations, topics)
    }
}
