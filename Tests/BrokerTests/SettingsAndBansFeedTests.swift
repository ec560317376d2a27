import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Logging
import XCTest

/// The state topics against a real broker: a reader started later loads what
/// is there (latest version per key), then follows changes.
final class SettingsAndBansFeedTests: XCTestCase {
    func testAReaderLoadsTheLatestVersionsThenFollowsChanges() async throws {
        guard let brokers = ProcessInfo.processInfo.environment["GEOCHAT_TEST_KAFKA_BROKERS"] else {
            if ProcessInfo.processInfo.environment["CI"] != nil { XCTFail("GEOCHAT_TEST_KAFKA_BROKERS is not set") }
            throw XCTSkip("GEOCHAT_TEST_KAFKA_BROKERS is not set")
        }
        let logger = Logger(label: "state-feed-tests")
        let settings = KafkaSettings(brokers: brokers, clientID: "test-\(UUID().uuidString.prefix(8))", partitions: 4)
        let producer = try KafkaProducer(settings: settings, logger: logger)
        defer { producer.close() }
        let topics = TopicProvisioner(producer: producer, settings: settings, logger: logger)
        try await topics.ensureRetrying(SettingsAndBansFeed.topics.map { TopicSpecs.spec(for: $0) })
        let events = KafkaEventPublisher(sender: producer)
        let before = try await topics.recordCount(Topics.settings) + topics.recordCount(Topics.bans)

        // Newest first on purpose: the older record arrives later and must not win.
        let cap = { (value: Int, version: Int64) in
            SettingValue(name: "room.cap", value: value, version: version, updatedBy: "test", updatedAtMs: 1)
        }
        try await events.publish(cap(7, 1_000_002))
        try await events.publish(cap(9, 1_000_001))
        // A nick of this run's own: the broker may hold an earlier run's bans.
        let nick = "mallory" + UUID().uuidString.prefix(8).filter(\.isLetter)
        let mallory = BanTarget.nick(nick)!
        try await events.publish(
            Ban(target: mallory, active: true, reason: "", by: "test", atMs: 1, version: 1_000_003))
        let after = try await topics.recordCount(Topics.settings) + topics.recordCount(Topics.bans)
        XCTAssertEqual(after - before, 3)

        let consumer = try KafkaConsumer(
            settings: settings, topics: SettingsAndBansFeed.topics, mode: .replay, pace: .background, logger: logger)
        try await consumer.start()
        let feed = SettingsAndBansFeed(consumer: consumer, settings: LiveSettings(), bans: BanList(), logger: logger)
        let reading = Task { await feed.run() }
        for _ in 0..<100 where !feed.isLoaded { try await Task.sleep(for: .milliseconds(50)) }
        XCTAssertTrue(feed.isLoaded)
        XCTAssertEqual(feed.settings.int(.roomCap, default: 500), 7)
        XCTAssertTrue(feed.bans.isBanned(nick: nick.uppercased()), "nicks are banned in any case")

        try await events.publish(
            Ban(target: mallory, active: false, reason: "", by: "test", atMs: 2, version: 1_000_004))
        for _ in 0..<100 where feed.bans.isBanned(nick: nick) { try await Task.sleep(for: .milliseconds(50)) }
        XCTAssertFalse(feed.bans.isBanned(nick: nick))
        reading.cancel()
        await consumer.close()
    }
}
