import Foundation
import GeoChatDomain
import GeoChatKafka
import GeoChatPostgres
import GeoChatRuntime
import HummingbirdBcrypt
import Synchronization

/// geochat-session: owns `session.sessions`; starts, renames, ends and expires
/// sessions. Also owns administration: admin accounts and tokens, bans,
/// settings and the audit log (Admin/).
@main
struct SessionServiceMain {
    static func main() async throws {
        let env = try ServiceEnvironment(service: "session", defaultPort: 9101)
        let lifetime = try env.configuration.int("session.lifetime.s", default: 86_400)
        let bcryptCost = try env.configuration.int("admin.bcrypt.cost", default: 12)
        guard (4...31).contains(bcryptCost) else {
            env.logger.critical("GEOCHAT_ADMIN_BCRYPT_COST must be 4 to 31", metadata: ["value": "\(bcryptCost)"])
            exit(2)
        }
        if CommandLine.arguments.dropFirst().first == AdminBootstrap.command {
            exit(try await AdminBootstrap.run(env, bcryptCost: bcryptCost))
        }
        let database = Database(settings: try PostgresSettings(env.configuration), logger: env.logger)
        let producer = try KafkaProducer(settings: env.kafka, logger: env.logger)
        let commandsIn = try KafkaConsumer(
            settings: env.kafka, topics: [Topics.sessionCommands], mode: .group("geochat-session"), pace: .interactive,
            logger: env.logger)
        let presenceIn = try KafkaConsumer(
            settings: env.kafka, topics: [Topics.presence], mode: .group("geochat-session-presence"), pace: .background,
            logger: env.logger)
        let adminIn = try KafkaConsumer(
            settings: env.kafka, topics: [Topics.adminCommands], mode: .group("geochat-session-admin"), pace: .background,
            logger: env.logger)
        let store = SessionStore(database: database)
        let adminStore = AdminStore(database: database)
        let commands = SessionCommands(store: store, events: EventPublisher(sender: producer), logger: env.logger)
        let housekeeping = SessionHousekeeping(
            store: store, commands: commands, presence: presenceIn,
            lifetimeSeconds: { (try? await adminStore.setting(.sessionLifetime)) ?? nil ?? lifetime }, logger: env.logger)
        let topicKeeper = TopicProvisioner(producer: producer, settings: env.kafka, logger: env.logger)
        let broadcaster = StateBroadcaster(
            store: adminStore, events: EventPublisher(sender: producer), topics: topicKeeper, logger: env.logger)
        let admin = AdminCommands(
            store: adminStore, state: broadcaster,
            tokenLifetimeSeconds: try env.configuration.int("admin.token.ttl.s", default: 43_200),
            loginFailureLimit: SettingsCatalog.definition(SettingName.adminLoginFailures.rawValue)!.defaultValue,
            decoyHash: Bcrypt.hash("decoy password of no account", cost: UInt8(bcryptCost)), logger: env.logger)
        let ready = Atomic<Bool>(false)

        let main = Worker("session", body: {
            try await store.migrate()
            let topics = TopicProvisioner(producer: producer, settings: env.kafka, logger: env.logger)
            try await topics.ensureRetrying(Topics.shared)
            try await commandsIn.start()
            try await presenceIn.start()
            try await adminIn.start()
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
                group.addTask {
                    await CommandProcessor(consumer: adminIn, producer: producer, logger: env.logger) {
                        await admin.handle($0)
                    }.run()
                }
                group.addTask { await broadcaster.run() }
                group.addTask { try await housekeeping.expireIdleSessions(every: .seconds(30)) }
                try? await group.next()
                group.cancelAll()
            }
        }, shutdown: {
            await commandsIn.close()
            await presenceIn.close()
            await adminIn.close()
            producer.close()
        })
        let health = HealthRoutes(isReady: { ready.load(ordering: .acquiring) && commandsIn.holdsPartitions }) {
            ServiceStatus(
                service: env.service, instance: env.instanceID, ready: ready.load(ordering: .acquiring),
                assignments: commandsIn.assignment() + presenceIn.assignment() + adminIn.assignment())
        }
        try await runServiceGroup(
            [database.client, main, adminServer(health: health, host: env.httpHost, port: env.httpPort, logger: env.logger)],
            logger: env.logger)
    }
}
