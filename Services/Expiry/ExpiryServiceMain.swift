import GeoChatBus
import GeoChatDomain
import GeoChatPostgres
import GeoChatRuntime

/// geochat-expiry: on a schedule and on demand (`StartExpiryRun` on
/// `geochat.expiry.commands`), has rooms nobody visited within the idle limit
/// (default 30 days) removed through their owners, in resumable batches, one
/// job at a time cluster-wide, and records each job's report.
@main
struct ExpiryServiceMain {
    static func main() async throws {
        var host = try ServiceHost(service: "expiry", defaultPort: 9104)
        let settings = try ExpirySettings(host.configuration)
        let database = try host.database()
        let jobs = ExpiryJobStore(database: database)
        host.migrates(jobs.migrate)
        // The idle limit and schedule an admin stored; no run starts before they are read.
        let adminState = SettingsAndBansFeed(
            consumer: try host.consumer(SettingsAndBansFeed.topics, .replay, pace: .background),
            settings: settings.live, bans: BanList(), logger: host.logger)
        host.runs("settings") { await adminState.run() }
        host.readyWhen { adminState.isLoaded }
        let jobRequested = Doorbell()
        try host.handles(
            ExpiryCommandHandlers(jobs: jobs, settings: settings, logger: host.logger, jobRequested: jobRequested)
                .handlers,
            group: ConsumerGroups.expiryCommands, pace: .background)
        let run = ExpiryRun(
            bus: try host.commandBus(), jobs: jobs, settings: settings, operatorSeal: host.environment.operatorSeal(),
            logger: host.logger)
        let runner = ExpiryRunner(
            jobs: jobs, run: run, settings: settings, logger: host.logger, jobRequested: jobRequested)
        host.runs("expiry jobs") { [isReady = host.isReady] in await runner.loop(isReady: isReady) }
        host.logger.info(
            "expiry settings",
            metadata: [
                "interval_s": "\(settings.interval.components.seconds)",
                "idle_limit_s": "\(settings.idleLimit.components.seconds)", "batch_size": "\(settings.batchSize)",
                "parallel": "\(settings.parallel)",
            ])
        try await host.run()
    }
}
