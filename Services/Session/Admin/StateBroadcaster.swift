import GeoChatBus
import GeoChatDomain
import Logging

/// Publishes settings and bans on their state topics: each change as it is
/// committed, and everything stored at start and whenever the topics lost
/// records (a broker that keeps topics in memory restarted). Readers keep the
/// highest version per key, so publishing again is always harmless.
struct StateBroadcaster: Sendable {
    let store: AdminStore
    let events: any EventPublisher
    /// How many records the settings and bans topics hold now.
    let stateRecordCount: @Sendable () async throws -> Int64
    let logger: Logger

    func publish(_ setting: SettingValue) async throws {
        try await events.publish(setting)
    }

    func publish(_ ban: Ban) async throws {
        try await events.publish(ban)
    }

    func publishAll() async throws {
        let settings = try await store.settings()
        let bans = try await store.allBans()
        for setting in settings { try await publish(setting) }
        for ban in bans { try await publish(ban) }
        logger.info(
            "settings and bans published", metadata: ["settings": "\(settings.count)", "bans": "\(bans.count)"])
    }

    /// At start; then, on a broker that forgets topics (`watchingForLostRecords`),
    /// every `interval`: publish everything again when the topics hold fewer
    /// records than they did (they were made anew, empty). A Kafka cluster
    /// keeps the compacted state topics, so there it only waits for shutdown after
    /// the first publish (the host stops a service whose loop ends).
    func run(watchingForLostRecords: Bool, every interval: Duration = .seconds(5)) async {
        var published = false
        var lastCount: Int64 = 0
        while !Task.isCancelled {
            do {
                let count = try await recordCount()
                if !published || count < lastCount {
                    if published {
                        logger.warning(
                            "state topics lost records; publishing settings and bans again",
                            metadata: ["had": "\(lastCount)", "has": "\(count)"])
                    }
                    try await publishAll()
                    published = true
                    lastCount = try await recordCount()
                } else {
                    lastCount = count
                }
                if published && !watchingForLostRecords {
                    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                    return
                }
            } catch {
                logger.warning(
                    "settings and bans not published yet", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await Task.sleep(for: interval)
        }
    }

    private func recordCount() async throws -> Int64 { try await stateRecordCount() }
}
