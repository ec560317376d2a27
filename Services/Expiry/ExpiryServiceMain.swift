import GeoChatDomain
import GeoChatKafka
import GeoChatPostgres
import GeoChatRuntime
import Synchronization

/// geochat-expiry: on a schedule, has rooms nobody visited within the idle
/// limit (default 30 days) removed through the rooms service, and records each run.
@main
struct ExpiryServiceMain {
    static func main() async throws {
        let env = try ServiceEnvironment(service: "expiry", defaultPort: 9104)
        let interval = try env.configuration.seconds("expiry.interval.s", default: 3600)
        let idleLimit = try env.configuration.seconds("room.idle.limit.s", default: 30 * 86_400)
        let database = Database(settings: try PostgresSettings(env.configuration), logger: env.logger)
        let producer = try KafkaProducer(settings: env.kafka, logger: env.logger)
        let rooms = try RequestClient(instance: env.instanceID, settings: env.kafka, producer: producer, logger: env.logger)
        let jobs = ExpiryJobs(database: database)
        let expiry = ExpiryRun(rooms: rooms, jobs: jobs, idleLimit: idleLimit, batchSize: 500, logger: env.logger)
        let migrated = Atomic<Bool>(false)
        let isReady: @Sendable () -> Bool = { migrated.load(ordering: .acquiring) && rooms.isReady }

        let main = Worker("expiry", body: {
            try await jobs.migrate()
            let topics = TopicProvisioner(producer: producer, settings: env.kafka, logger: env.logger)
            try await topics.ensureRetrying(Topics.shared)
            migrated.store(true, ordering: .releasing)
            env.logger.info("expiry service started", metadata: ["interval_s": "\(interval.components.seconds)", "idle_limit_s": "\(idleLimit.components.seconds)"])
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await topics.keep(Topics.shared) }
                group.addTask { try? await rooms.run() }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        guard rooms.isReady else { continue }
                        do { try await expiry.run(trigger: "schedule") } catch {
                            env.logger.warning("expiry run failed", metadata: ["error": "\(error)"])
                        }
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }, shutdown: {
            await rooms.shutdown()
            producer.close()
        })
        let health = HealthRoutes(isReady: isReady) {
            ServiceStatus(service: env.service, instance: env.instanceID, ready: isReady(), assignments: [])
        }
        try await runServiceGroup(
            [database.client, main, adminServer(health: health, host: env.httpHost, port: env.httpPort, logger: env.logger)],
            logger: env.logger)
    }
}
