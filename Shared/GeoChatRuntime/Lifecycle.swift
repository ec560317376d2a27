import Hummingbird
import Logging
import ServiceLifecycle

/// A long-running piece of a service (a consumer loop, a scheduler) as a
/// lifecycle `Service`: it is cancelled on SIGTERM/SIGINT, then `shutdown` runs
/// (close consumers so their offsets are committed).
public struct Worker: Service {
    let name: String
    let body: @Sendable () async throws -> Void
    let shutdown: @Sendable () async -> Void

    public init(
        _ name: String, body: @escaping @Sendable () async throws -> Void,
        shutdown: @escaping @Sendable () async -> Void = {}
    ) {
        self.name = name
        self.body = body
        self.shutdown = shutdown
    }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await body() }
        } catch is CancellationError {}
        await shutdown()
    }
}

/// Runs the services of one executable until a signal asks it to stop.
public func runServiceGroup(_ services: [any Service], logger: Logger) async throws {
    let group = ServiceGroup(
        configuration: .init(
            services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
    try await group.run()
}

/// The small HTTP server of a non-HTTP service: health, readiness, status.
public func adminServer(health: HealthRoutes, host: String, port: Int, logger: Logger) -> some Service {
    let router = Router()
    health.register(on: router)
    return Application(router: router, configuration: .init(address: .hostname(host, port: port)), logger: logger)
}
