import GeoChatDomain
import GeoChatKafka
import GeoChatPostgres
import GeoChatRuntime
import Synchronization

/// geochat-rooms: owns `rooms.rooms` and memberships; creates rooms, answers
/// region queries, joins and leaves, tracks visits, removes idle rooms on request.
@main
struct RoomsServiceMain {
    static func main() async throws {
        let env = try ServiceEnvironment(service: "rooms", defaultPort: 9102)
        let database = Database(settings: try PostgresSettings(env.configuration), logger: env.logger)
        let producer = try KafkaProducer(settings: env.kafka, logger: env.logger)
        let commandsIn = try KafkaConsumer(
            settings: env.kafka, topics: [Topics.roomsCommands], mode: .group("geochat-rooms"), pace: .interactive,
            logger: env.logger)
        let activityIn = try KafkaConsumer(
            settings: env.kafka, topics: [Topics.messageEvents, Topics.sessionEvents],
            mode: .group("geochat-rooms-activity"), pace: .background, logger: env.logger)
        let store = RoomStore(database: database)
        let commands = RoomCommands(store: store, events: EventPublisher(sender: producer), logger: env.logger)
        let activity = RoomActivityFeed(store: store, consumer: activityIn, logger: env.logger)
        let ready = Atomic<Bool>(false)

        let main = Worker("rooms", body: {
            try await store.migrate()
            let topics = TopicProvisioner(producer: producer, settings: env.kafka, logger: env.logger)
            try await topics.ensureRetrying(Topics.shared)
            try await commandsIn.start()
            try await activityIn.start()
            ready.store(true, ordering: .releasing)
            env.logger.info("rooms service ready")
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await topics.keep(Topics.shared) }
                group.addTask {
                    await CommandProcessor(consumer: commandsIn, producer: producer, logger: env.logger) {
                        await commands.handle($0)
                    }.run()
                }
                group.addTask { await activity.run() }
                await group.next()
                group.cancelAll()
            }
        }, shutdown: {
            await commandsIn.close()
            await activityIn.close()
            producer.close()
        })
        let health = HealthRoutes(isReady: { ready.load(ordering: .acquiring) && commandsIn.holdsPartitions }) {
            ServiceStatus(
                service: env.service, instance: env.instanceID, ready: ready.load(ordering: .acquiring),
                assignments: commandsIn.assignment() + activityIn.assignment())
        }
        try await runServiceGroup(
            [database.client, main, adminServer(health: health, host: env.httpHost, port: env.httpPort, logger: env.logger)],
            logger: env.logger)
    }
}
