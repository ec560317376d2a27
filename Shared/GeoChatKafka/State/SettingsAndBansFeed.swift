import GeoChatDomain
import Logging
import Synchronization

/// Loads `geochat.settings` and `geochat.bans` from their beginning into
/// `LiveSettings` and `BanList`, then follows them: the latest version per key
/// is the state, so every instance (and every restart) ends up with the same.
/// `isLoaded` turns true once everything that was in the topics at start was read.
public final class SettingsAndBansFeed: Sendable {
    public static let topics = [Topics.settings, Topics.bans]

    public let settings: LiveSettings
    public let bans: BanList
    private let consumer: KafkaConsumer
    private let logger: Logger
    private let loaded = Atomic<Bool>(false)

    public init(kafka: KafkaSettings, settings: LiveSettings, bans: BanList, logger: Logger) throws {
        self.settings = settings
        self.bans = bans
        self.logger = logger
        consumer = try KafkaConsumer(settings: kafka, topics: Self.topics, mode: .replay, pace: .background, logger: logger)
    }

    public var isLoaded: Bool { loaded.load(ordering: .acquiring) }

    /// Positions on the topics (they must exist), retrying while the broker is away.
    public func start() async throws {
        while true {
            do {
                try await consumer.start()
                return
            } catch {
                logger.warning("settings and bans feed not positioned yet, retrying", metadata: ["error": "\(error)"])
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Applies records until cancelled; meanwhile re-reads topics a restarted
    /// broker made anew (the session service publishes everything again then).
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.consumer.followRecreatedTopics() }
            group.addTask { await self.apply() }
            await group.next()
            group.cancelAll()
        }
    }

    private func apply() async {
        var pending = consumer.replayTargets.filter { $0.value > 0 }
        if pending.isEmpty { markLoaded() }
        for await record in consumer.records {
            switch record.topic {
            case Topics.settings:
                if let setting = EventDecoding.decode(SettingValue.self, schema: EventSchemas.setting, from: record) {
                    settings.apply(setting)
                }
            case Topics.bans:
                if let ban = EventDecoding.decode(Ban.self, schema: EventSchemas.ban, from: record) {
                    bans.apply(ban)
                }
            default:
                break
            }
            if !pending.isEmpty {
                let key = "\(record.topic)/\(record.partition)"
                if let end = pending[key], record.offset + 1 >= end { pending[key] = nil }
                if pending.isEmpty { markLoaded() }
            }
        }
    }

    public func close() async { await consumer.close() }

    private func markLoaded() {
        if !loaded.exchange(true, ordering: .acquiringAndReleasing) {
            logger.info("settings and bans loaded", metadata: ["settings": "\(settings.all.count)", "bans": "\(bans.active.count)"])
        }
    }
}
