import GeoChatDomain
import GeoChatKafka
import GeoChatPostgres
import GeoChatRuntime
import Synchronization

/// geochat-session: owns `session.sessions`; starts, renames, ends and expires sessions.
@main
struct SessionServiceMain {
    static func main() async throws {
        let env = try ServiceEnvironment(service: "session", defaultPort: 9101)
        let lifetime = try env.configuration.int("session.lifetime.s", default: 86_400)
        let database = Database(settings: try PostgresSettings(env.configuration), logger: env.logger)
        let producer = try KafkaProducer(settings: env.kafka, logger: env.logger)
        let commandsIn = try KafkaConsumer(
            settings: env.kafka, topics: [Topics.sessionCommands], mode: .group("geochat-session"), logger: env.logger)
        let presenceIn = try KafkaConsumer(
            settings: env.kafka, topics: [Topics.presence], mode: .group("geochat-session-presence"),
            logger: env.logger)
        let store = SessionStore(database: database)
        let commands = SessionCommands(store: store, events: EventPublisher(sender: producer), logger: env.logger)
        let housekeeping = SessionHousekeeping(
            store: store, commands: commands, presence: presenceIn, lifetimeSeconds: lifetime, logger: env.logger)
        let ready = Atomic<Bool>(false)

        let main = Worker("session", body: {
            try await store.migrate()
            let topics = TopicProvisioner(producer: producer, settings: env.kafka, logger: env.logger)
            try await topics.ensureRetrying(Topics.shared)
            try await commandsIn.start()
            try await presenceIn.start()
            ready.store(true, ordering: .releasing)
            env.logger.info("session service ready")
            await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await topics.keep(Topics.shared) }
                group.addTask {
                    await CommandProcessor(consumer: commandsIn, producer: producer, logger: env.logger) {
                        await commands.handle($0)
                    }.run()
                }
                group.addTask { await housekeeping.recordPresence() }
                group.addTask { try await housekeeping.expireIdleSessions(every: .seconds(30)) }
                try? await group.next()
                group.cancelAll()
            }
        }, shutdown: {
            await commandsIn.close()
            await presenceIn.close()
            producer.close()
        })
        let health = HealthRoutes(isReady: { ready.load(ordering: .acquiring) && commandsIn.holdsPartitions }) {
            ServiceStatus(
                service: env.service, instance: env.instanceID, ready: ready.load(ordering: .acquiring),
                assignments: commandsIn.assignment() + presenceIn.assignment())
        }
        try await runServiceGroup(
            [database.client, main, adminServer(health: health, host: env.httpHost, port: env.httpPort, logger: env.logger)],
            logger: env.logger)
    }
}
