import GeoChatDomain
import GeoChatKafka
import GeoChatPostgres
import GeoChatRuntime
import Synchronization

/// geochat-messaging: owns `messaging.messages`; gives each post the room's
/// next id, commits it, answers, and publishes it for every gateway.
@main
struct MessagingServiceMain {
    static func main() async throws {
        let env = try ServiceEnvironment(service: "messaging", defaultPort: 9103)
        let database = Database(settings: try PostgresSettings(env.configuration), logger: env.logger)
        let producer = try KafkaProducer(settings: env.kafka, logger: env.logger)
        let commandsIn = try KafkaConsumer(
            settings: env.kafka, topics: [Topics.messagingCommands], mode: .group("geochat-messaging"), pace: .interactive,
            logger: env.logger)
        let roomEventsIn = try KafkaConsumer(
            settings: env.kafka, topics: [Topics.roomEvents], mode: .group("geochat-messaging-rooms"), pace: .background,
            logger: env.logger)
        let rooms = try RequestClient(instance: env.instanceID, settings: env.kafka, producer: producer, logger: env.logger)
        let log = MessageLog(database: database)
        let unpublished = UnpublishedMessages()
        let commands = MessagingCommands(
            log: log, rooms: rooms, events: EventPublisher(sender: producer), unpublished: unpublished,
            logger: env.logger)
        let lifecycle = RoomLifecycleFeed(log: log, consumer: roomEventsIn, logger: env.logger)
        let started = Atomic<Bool>(false)
        let isReady: @Sendable () -> Bool = {
            started.load(ordering: .acquiring) && rooms.isReady && commandsIn.holdsPartitions
        }

        let main = Worker("messaging", body: {
            try await log.migrate()
            let topics = TopicProvisioner(producer: producer, settings: env.kafka, logger: env.logger)
            try await topics.ensureRetrying(Topics.shared)
            try await commandsIn.start()
            try await roomEventsIn.start()
            started.store(true, ordering: .releasing)
            env.logger.info("messaging service started")
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await topics.keep(Topics.shared) }
                group.addTask { try? await rooms.run() }
                group.addTask {
                    await CommandProcessor(consumer: commandsIn, producer: producer, logger: env.logger) {
                        await commands.handle($0)
                    }.run()
                }
                group.addTask { await lifecycle.run() }
                group.addTask { await unpublished.relay(logger: env.logger) { try await commands.publish($0) } }
                await group.next()
                group.cancelAll()
            }
        }, shutdown: {
            await commandsIn.close()
            await roomEventsIn.close()
            await rooms.shutdown()
            producer.close()
        })
        let health = HealthRoutes(isReady: isReady) {
            ServiceStatus(
                service: env.service, instance: env.instanceID, ready: isReady(),
                assignments: commandsIn.assignment() + roomEventsIn.assignment())
        }
        try await runServiceGroup(
            [database.client, main, adminServer(health: health, host: env.httpHost, port: env.httpPort, logger: env.logger)],
            logger: env.logger)
    }
}
