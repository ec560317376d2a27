import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// Runs one GeoChat executable. A service's `main` declares what it owns and
/// does — its migrations, the command handlers it serves, the topics it
/// follows, its loops and what else readiness needs — and calls `run()`.
///
/// Start-up is the same everywhere: migrations, the shared topics, every
/// consumer positioned (retrying while the broker is away), then every
/// component runs side by side as a lifecycle `Service` until SIGTERM/SIGINT;
/// then consumers close (committing offsets), the command bus stops, the
/// producer flushes. `/ready` and `/status` read one readiness rule: started,
/// the reply path works (if the service sends commands), every command group
/// joined, and whatever the service added with `readyWhen`.
public struct ServiceHost: Sendable {
    public let environment: ServiceEnvironment
    public let producer: KafkaProducer
    public let events: KafkaEventPublisher
    /// Creates the shared topics at start and keeps them; also answers record counts.
    public let topics: TopicProvisioner
    public var logger: Logger { environment.logger }
    public var configuration: Configuration { environment.configuration }

    private var bus: KafkaCommandBus?
    private var resources: [any Service] = []
    private var migrations: [@Sendable () async throws -> Void] = []
    private var consumers: [KafkaConsumer] = []
    private var components: [HostedComponent] = []
    private let readiness = Readiness()
    private var details: [@Sendable () -> [String: String]] = []
    private var application: (@Sendable (HealthRoutes) -> [any Service])?

    public init(service: String, defaultPort: Int, configuration: Configuration = Configuration()) throws {
        try self.init(
            environment: ServiceEnvironment(service: service, defaultPort: defaultPort, configuration: configuration))
    }

    /// For a main that reads its environment first (a sub-command that runs instead of the service).
    public init(environment: ServiceEnvironment) throws {
        self.environment = environment
        // First among the resources, so that it stops last: the spans of the
        // shutdown itself are still sent.
        let traces = environment.settings { try TraceExport(configuration: $0) }
        let exporter = environment.settings { _ in
            try traces.start(service: environment.service, instance: environment.instanceID, logger: environment.logger)
        }
        producer = try KafkaProducer(settings: environment.kafka, logger: environment.logger)
        events = KafkaEventPublisher(sender: producer)
        topics = TopicProvisioner(producer: producer, settings: environment.kafka, logger: environment.logger)
        if let exporter { resources.append(exporter) }
    }

    /// The bus this service sends commands on (one reply topic per instance).
    /// `readsEvents`: the instance hands the answers its event feed reads to
    /// the bus (a gateway: `KafkaCommandBus.answered`); the first call decides.
    public mutating func commandBus(readsEvents: Bool = false) throws -> KafkaCommandBus {
        if let bus { return bus }
        let made = try KafkaCommandBus(
            instance: environment.instanceID, settings: environment.kafka, producer: producer,
            readsEvents: readsEvents, logger: logger)
        bus = made
        readiness.add { made.isReady }
        return made
    }

    /// A lifecycle service run beside the components for the process's life (a database pool).
    public mutating func uses(_ resource: any Service) { resources.append(resource) }

    /// A schema migration, run before any consumer starts.
    public mutating func migrates(_ migrate: @escaping @Sendable () async throws -> Void) { migrations.append(migrate) }

    /// Serves the commands of `handlers.topic` as a member of `group`;
    /// `.background` for commands no phone waits for (admin, expiry). Throws
    /// (the service does not start) unless every command of the topic has a handler.
    public mutating func handles(
        _ handlers: CommandHandlers, group: String, pace: KafkaConsumer.Pace = .interactive
    ) throws {
        try handlers.requireEvery()
        let consumer = try consumer([handlers.topic], .group(group), pace: pace)
        readiness.add { consumer.holdsPartitions }
        let processor = CommandProcessor(consumer: consumer, producer: producer, handlers: handlers, logger: logger)
        runs("commands \(handlers.topic)") { await processor.run() }
    }

    /// A consumer the host starts after the migrations, follows through a broker
    /// that lost its topics (tail and replay modes), and closes at shutdown.
    public mutating func consumer(
        _ topics: [String], _ mode: KafkaConsumer.Mode, pace: KafkaConsumer.Pace
    ) throws -> KafkaConsumer {
        let consumer = try KafkaConsumer(
            settings: environment.kafka, topics: topics, mode: mode, pace: pace, logger: logger)
        consumers.append(consumer)
        if consumer.rotates {
            runs("generations \(topics.joined(separator: ","))") { await consumer.followGenerations() }
        }
        if case .group = mode {
        } else if environment.kafka.profile.followsRecreatedTopics {
            runs("follow \(topics.joined(separator: ","))") { await consumer.followRecreatedTopics() }
        }
        return consumer
    }

    /// A loop that runs from start-up until shutdown.
    public mutating func runs(_ name: String, _ body: @escaping @Sendable () async throws -> Void) {
        components.append(HostedComponent(name: name, body: body))
    }

    /// A further condition of readiness (a state topic loaded).
    public func readyWhen(_ condition: @escaping @Sendable () -> Bool) { readiness.add(condition) }

    /// The one readiness rule, for loops that wait for it (`/ready` answers the same).
    public var isReady: @Sendable () -> Bool { { [readiness] in readiness.isReady } }

    /// Figures `/status` shows besides the assignments.
    public mutating func reports(_ status: @escaping @Sendable () -> [String: String]) { details.append(status) }

    /// Replaces the small health server by the service's own HTTP listeners,
    /// which must register the health routes they are given.
    public mutating func serves(_ makeApplication: @escaping @Sendable (HealthRoutes) -> [any Service]) {
        application = makeApplication
    }

    public func run() async throws {
        let isReady = self.isReady
        let health = HealthRoutes(isReady: isReady) { [environment, consumers, details] in
            ServiceStatus(
                service: environment.service, instance: environment.instanceID, ready: isReady(),
                assignments: consumers.flatMap { $0.assignment() },
                details: details.reduce(into: [:]) { all, more in all.merge(more()) { _, new in new } })
        }
        let http =
            application?(health)
            ?? [adminServer(health: health, host: environment.httpHost, port: environment.httpPort, logger: logger)]
        let worker = Worker(
            environment.service,
            body: { [self] in
                try await startUp()
                readiness.markStarted()
                logger.info("\(environment.service) ready to start", metadata: ["http_port": "\(environment.httpPort)"])
                await runComponents()
            },
            shutdown: { [consumers, bus, producer, environment] in
                for consumer in consumers { await consumer.close() }
                await bus?.shutdown(deletingReplyTopic: environment.instanceIDIsGenerated)
                producer.close()
            })
        try await runServiceGroup(resources + [worker] + http, logger: logger)
    }

    private func startUp() async throws {
        for migrate in migrations { try await migrate() }
        try await topics.ensureRetrying(TopicSpecs.shared)
        for consumer in consumers {
            while true {
                do {
                    try await consumer.start()
                    break
                } catch {
                    logger.warning("consumer not positioned yet, retrying", metadata: ["error": "\(error)"])
                    try await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    /// Every component side by side; when one ends (cancelled at shutdown), all do.
    private func runComponents() async {
        var all = components
        if environment.kafka.profile.recreatesLostTopics {
            let groups = consumers.compactMap(\.rotatingGroup)
            all.append(HostedComponent(name: "topics") { await topics.keep(TopicSpecs.shared, groups: groups) })
        }
        if let bus { all.append(HostedComponent(name: "command bus") { try await bus.run() }) }
        await withTaskGroup(of: Void.self) { group in
            for component in all {
                group.addTask { [logger] in
                    do {
                        try await component.run()
                        if !Task.isCancelled { logger.error("\(component.name) ended; stopping the service") }
                    } catch is CancellationError {} catch {
                        logger.error("\(component.name) stopped", metadata: ["error": "\(error)"])
                    }
                }
            }
            await group.next()
            group.cancelAll()
        }
    }
}

/// One of a service's loops, as a lifecycle `Service`.
struct HostedComponent: Service {
    let name: String
    let body: @Sendable () async throws -> Void

    func run() async throws { try await body() }
}
