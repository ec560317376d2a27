import GeoChatDomain
import GeoChatKafka
import GeoChatRuntime
import Hummingbird
import NIOCore
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
        let adminState = try SettingsAndBansFeed(
            kafka: env.kafka, settings: settings.live, bans: BanList(), logger: env.logger)
        let sessions = SessionDirectory(backend: backend, bans: adminState.bans)
        let messages = MessageReadModel(backend: backend)
        let presence = PresenceTracker(gateway: env.instanceID)
        ReadModelMetrics.register(sessions: sessions, messages: messages)
        let feedConsumer = try KafkaConsumer(settings: env.kafka, topics: EventFeed.topics, mode: .tail, pace: .interactive,
            logger: env.logger)
        let feed = EventFeed(consumer: feedConsumer, messages: messages, sessions: sessions, presence: presence, logger: env.logger)
        let limiter = RateLimiter(settings: settings.rateLimits)
        let feedStarted = Atomic<Bool>(false)
        let isReady: @Sendable () -> Bool = {
            feedStarted.load(ordering: .acquiring) && requests.isReady && adminState.isLoaded
        }

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
            try await adminState.start()
            feedStarted.store(true, ordering: .releasing)
            env.logger.info("gateway feeds started", metadata: ["port": "\(env.httpPort)"])
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await topics.keep(Topics.shared) }
                group.addTask { try? await requests.run() }
                group.addTask { await feed.run() }
                group.addTask { await adminState.run() }
                group.addTask { await feedConsumer.followRecreatedTopics() }
                group.addTask {
                    await presence.publishLoop(
                        events: EventPublisher(sender: producer), every: .milliseconds(500), nowMs: currentTimeMs)
                }
                group.addTask {
                    // Live rate settings reach the limiter within a second of arriving.
                    while !Task.isCancelled {
                        limiter.update(settings.currentRateLimits)
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(30))
                        messages.evictIdle()
                        limiter.prune()
                        presence.prune(olderThanMs: currentTimeMs() - 2 * settings.presenceTimeoutMs - 60_000)
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }, shutdown: {
            await feedConsumer.close()
            await adminState.close()
            await requests.shutdown()
            producer.close()
        })

        let router = Router(context: GatewayRequestContext.self)
        HealthRoutes(isReady: isReady) {
            ServiceStatus(
                service: env.service, instance: env.instanceID, ready: isReady(), assignments: feedConsumer.assignment(),
                details: ["sessions": "\(sessions.count)", "rooms": "\(messages.roomCount)"])
        }.register(on: router)
        let handler = LegacyHandler(
            backend: backend, sessions: sessions, messages: messages, presence: presence, lobby: LobbyLocator(),
            settings: settings)
        LegacyRoutes(handler: handler, settings: settings, limiter: limiter, logger: env.logger).register(on: router)
        // Admin requests may wait longer than a client's: a login runs bcrypt, an expiry run starts.
        let adminBackend = AdminBackend(
            services: ServiceClients(requests: requests, timeout: max(settings.requestTimeout, .seconds(10))),
            gateway: env.instanceID, logger: env.logger)
        AdminRoutes(
            endpoints: AdminEndpoints(
                backend: adminBackend, sessions: sessions, presence: presence, messages: messages, settings: settings,
                throttle: LoginThrottle(), logger: env.logger),
            pathPrefix: settings.pathPrefix
        ).register(on: router)
        let app = Application(
            router: router, server: .http1(configuration: .init(idleTimeout: TimeAmount(settings.idleTimeout))),
            configuration: .init(address: .hostname(env.httpHost, port: env.httpPort), serverName: nil),
            logger: env.logger)
        try await runServiceGroup([worker, app], logger: env.logger)
    }
}
