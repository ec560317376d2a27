import GeoChatDomain
import GeoChatKafka
import GeoChatRuntime
import Hummingbird
import Synchronization

/// geochat-gateway: speaks the legacy XML protocol over HTTP. Holds no database:
/// writes go to the owning services as Kafka commands, reads come from read
/// models fed by event topics.
@main
struct GatewayMain {
    static func main() async throws {
        let env = try ServiceEnvironment(service: "gateway", defaultPort: 8080)
        let settings = try GatewaySettings(env.configuration)
        let producer = try KafkaProducer(settings: env.kafka, logger: env.logger)
        let requests = try RequestClient(instance: env.instanceID, settings: env.kafka, producer: producer, logger: env.logger)
        let backend = ServiceClients(requests: requests, timeout: settings.requestTimeout)
        let sessions = SessionDirectory(backend: backend)
        let messages = MessageReadModel(backend: backend)
        let presence = PresenceTracker(gateway: env.instanceID)
        let feedConsumer = try KafkaConsumer(settings: env.kafka, topics: EventFeed.topics, mode: .tail, logger: env.logger)
        let feed = EventFeed(consumer: feedConsumer, messages: messages, sessions: sessions, presence: presence, logger: env.logger)
        let feedStarted = Atomic<Bool>(false)
        let isReady: @Sendable () -> Bool = { feedStarted.load(ordering: .acquiring) && requests.isReady }

        let worker = Worker("gateway", body: {
            let topics = TopicProvisioner(producer: producer, settings: env.kafka, logger: env.logger)
            try await topics.ensureRetrying(Topics.shared)
            while true {
                do {
                    try await feedConsumer.start()
                    break
                } catch {
                    env.logger.warning("event feed not positioned yet, retrying", metadata: ["error": "\(error)"])
                    try await Task.sleep(for: .seconds(1))
                }
            }
            feedStarted.store(true, ordering: .releasing)
            env.logger.info("gateway feeds started", metadata: ["port": "\(env.httpPort)"])
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await topics.keep(Topics.shared) }
                group.addTask { try? await requests.run() }
                group.addTask { await feed.run() }
                group.addTask { await feedConsumer.followRecreatedTopics() }
                group.addTask {
                    await presence.publishLoop(
                        events: EventPublisher(sender: producer), every: .milliseconds(500), nowMs: currentTimeMs)
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(30))
                        messages.evictIdle()
                        presence.prune(olderThanMs: currentTimeMs() - 2 * settings.presenceTimeoutMs - 60_000)
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }, shutdown: {
            await feedConsumer.close()
            await requests.shutdown()
            producer.close()
        })

        let router = Router()
        HealthRoutes(isReady: isReady) {
            ServiceStatus(
                service: env.service, instance: env.instanceID, ready: isReady(), assignments: feedConsumer.assignment(),
                details: ["sessions": "\(sessions.count)", "rooms": "\(messages.roomCount)"])
        }.register(on: router)
        let handler = LegacyHandler(
            backend: backend, sessions: sessions, messages: messages, presence: presence, lobby: LobbyLocator(),
            settings: settings)
        LegacyRoutes(handler: handler, settings: settings, logger: env.logger).register(on: router)
        let app = Application(
            router: router, configuration: .init(address: .hostname(env.httpHost, port: env.httpPort), serverName: nil),
            logger: env.logger)
        try await runServiceGroup([worker, app], logger: env.logger)
    }
}
