import GeoChatDomain
import GeoChatKafka
import GeoChatPostgres
import GeoChatRuntime
import Synchronization

/// geochat-expiry: on a schedule and on demand (`ExpiryCommand`s on
/// `geochat.expiry.commands`), has rooms nobody visited within the idle limit
/// (default 30 days) removed through their owners, in resumable batches, one
/// job at a time cluster-wide, and records each job's report.
@main
struct ExpiryServiceMain {
    static func main() async throws {
        let env = try ServiceEnvironment(service: "expiry", defaultPort: 9104)
        let settings = try ExpirySettings(env.configuration)
        // The idle limit and schedule an admin stored; no run starts before they are read.
        let adminState = try SettingsAndBansFeed(kafka: env.kafka, settings: settings.live, bans: BanList(), logger: env.logger)
        let database = Database(settings: try PostgresSettings(env.configuration), logger: env.logger)
        let producer = try KafkaProducer(settings: env.kafka, logger: env.logger)
        let commandsIn = try KafkaConsumer(
            settings: env.kafka, topics: [Topics.expiryCommands], mode: .group("geochat-expiry"), pace: .background,
            logger: env.logger)
        let client = try RequestClient(instance: env.instanceID, settings: env.kafka, producer: producer, logger: env.logger)
        let jobs = ExpiryJobs(database: database)
        let run = ExpiryRun(client: client, jobs: jobs, settings: settings, logger: env.logger)
        let runner = ExpiryRunner(jobs: jobs, run: run, settings: settings, logger: env.logger)
        let commands = ExpiryCommands(jobs: jobs, settings: settings, logger: env.logger)
        let started = Atomic<Bool>(false)
        let isReady: @Sendable () -> Bool = {
            started.load(ordering: .acquiring) && client.isReady && adminState.isLoaded
        }

        let main = Worker("expiry", body: {
            try await jobs.migrate()
            let topics = TopicProvisioner(producer: producer, settings: env.kafka, logger: env.logger)
            try await topics.ensureRetrying(Topics.shared)
            try await commandsIn.start()
            try await adminState.start()
            started.store(true, ordering: .releasing)
            env.logger.info(
                "expiry service started",
                metadata: [
                    "interval_s": "\(settings.interval.components.seconds)",
                    "idle_limit_s": "\(settings.idleLimit.components.seconds)", "batch_size": "\(settings.batchSize)",
                    "parallel": "\(settings.parallel)",
                ])
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await topics.keep(Topics.shared) }
                group.addTask { try? await client.run() }
                group.addTask { await adminState.run() }
                group.addTask {
                    await CommandProcessor(consumer: commandsIn, producer: producer, logger: env.logger) {
                        await commands.handle($0)
                    }.run()
                }
                group.addTask { await runner.loop(isReady: isReady) }
                await group.next()
                group.cancelAll()
            }
        }, shutdown: {
            await commandsIn.close()
            await adminState.close()
            await client.shutdown()
            producer.close()
        })
        let health = HealthRoutes(isReady: isReady) {
            ServiceStatus(service: env.service, instance: env.instanceID, ready: isReady(), assignments: commandsIn.assignment())
        }
        try await runServiceGroup(
            [database.client, main, adminServer(health: health, host: env.httpHost, port: env.httpPort, logger: env.logger)],
            logger: env.logger)
    }
}
