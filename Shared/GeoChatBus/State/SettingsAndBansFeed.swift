import GeoChatDomain
import GeoChatKafka
import Logging
import Synchronization

/// Loads `geochat.settings` and `geochat.bans` from their beginning into
/// `LiveSettings` and `BanList`, then follows them: the latest version per key
/// is the state, so every instance (and every restart) ends up with the same.
/// `isLoaded` turns true once everything that was in the topics at start was read.
/// A broker that lost its topics makes them anew; the session service then publishes everything again.
public final class SettingsAndBansFeed: Sendable {
    public static let topics = [Topics.settings, Topics.bans]

    public let settings: LiveSettings
    public let bans: BanList
    private let consumer: KafkaConsumer
    private let logger: Logger
    private let loaded = Atomic<Bool>(false)

    /// `consumer` reads `topics` in `.replay` mode; whoever runs the feed starts it.
    public init(consumer: KafkaConsumer, settings: LiveSettings, bans: BanList, logger: Logger) {
        self.settings = settings
        self.bans = bans
        self.logger = logger
        self.consumer = consumer
    }

    public var isLoaded: Bool { loaded.load(ordering: .acquiring) }

    /// Applies records until cancelled.
    public func run() async { await apply() }

    private func apply() async {
        var pending = consumer.replayTargets.filter { $0.value > 0 }
        if pending.isEmpty { markLoaded() }
        for await record in consumer.records {
            switch record.topic {
            case Topics.settings:
                if let setting = EventDecoding.decode(SettingValue.self, from: record) {
                    settings.apply(setting)
                }
            case Topics.bans:
                if let ban = EventDecoding.decode(Ban.self, from: record) {
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

    private func markLoaded() {
        if !loaded.exchange(true, ordering: .acquiringAndReleasing) {
            logger.info(
                "settings and bans loaded",
                metadata: ["settings": "\(settings.all.count)", "bans": "\(bans.active.count)"])
        }
    }
}
