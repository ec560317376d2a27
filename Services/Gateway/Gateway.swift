import GatewayCore
import GeoChatBus
import GeoChatDomain
import GeoChatRuntime
import Hummingbird
import Logging
import NIOCore

/// The gateway's state, built once from its settings and a command bus: over
/// Kafka in `main`, in memory in the router tests.
struct Gateway: Sendable {
    let instance: String
    let settings: GatewaySettings
    let services: ServiceClients
    let bans: BanList
    let sessions: SessionDirectory
    let messages: MessageReadModel
    let rooms: RoomMap
    let presence: PresenceTracker
    let limiter: RateLimiter
    /// What both protocols do, in one place.
    let actions: ChatActions
    /// Push subscribers' participant lists.
    let participants: ParticipantLists
    /// Push: rooms' news as Server-Sent Events.
    let events: RoomEventStream
    /// The admin API's keys; nil when this gateway serves no admin API
    /// (`GatewaySettings.adminAPI`).
    let adminKeys: AdminKeys?
    let logger: Logger

    init(
        instance: String, settings: GatewaySettings, bus: any CommandBus, bans: BanList = BanList(),
        adminKeys: AdminKeys?, logger: Logger
    ) {
        self.instance = instance
        self.adminKeys = adminKeys
        self.settings = settings
        self.services = ServiceClients(bus: bus, timeout: settings.requestTimeout)
        self.bans = bans
        self.sessions = SessionDirectory(backend: services, bans: bans)
        self.messages = MessageReadModel(backend: services)
        self.rooms = RoomMap()
        // A mark holds its request's answer: with the rooms service away it gives up sooner than a command.
        let marking = ServiceClients(bus: bus, timeout: min(settings.requestTimeout, .seconds(2)))
        self.presence = PresenceTracker(
            gateway: instance, timeoutMs: { settings.presenceTimeoutMs },
            markReturn: { session, seenAtMs, timeoutMs in
                // Advisory: when it fails, the next presence batch brings the sighting a moment later.
                let mark = MarkPresent(session: session, seenAtMs: seenAtMs, presenceTimeoutMs: timeoutMs)
                return (try? await marking.send(mark)) != nil
            })
        self.limiter = RateLimiter(settings: settings.rateLimits)
        self.logger = logger
        self.actions = ChatActions(
            backend: services, sessions: sessions, messages: messages, rooms: rooms, presence: presence,
            lobby: LobbyLocator(),
            places: WaitingPlaces(perGateway: settings.push.maxSubscribers, perAddress: settings.push.maxPerAddress),
            logger: logger)
        self.participants = ParticipantLists()
        self.events = RoomEventStream(
            actions: actions, participants: participants, settings: settings.push, logger: logger)
    }

    /// The public listener: the phones' protocol, the JSON API and push, the
    /// web map, and the load balancer's `/health` and `/ready`. Nothing else
    /// (docs/security.md, "What listens where").
    func buildRouter(health: HealthRoutes) -> Router<GatewayRequestContext> {
        let router = Router(context: GatewayRequestContext.self)
        if TraceExport.isExporting { router.add(middleware: RequestTracing()) }
        router.add(
            middleware: SecurityHeaders(
                imageOrigins: settings.map.tileOrigin.map { [$0] } ?? [],
                connectOrigins: settings.map.geocoderOrigin.map { [$0] } ?? []))
        health.registerProbes(on: router)
        let requests = ChatRequests(
            actions: actions, limiter: limiter, clientAddresses: settings.clientAddresses, logger: logger)
        LegacyRoutes(handler: LegacyHandler(actions: actions), settings: settings, requests: requests)
            .register(on: router)
        APIRoutes(actions: actions, events: events, settings: settings, requests: requests).register(on: router)
        WebMapRoutes(
            webDirectory: settings.webDirectory, leafletDirectory: settings.leafletDirectory, map: settings.map,
            logger: logger
        )
        .register(on: router)
        return router
    }

    /// The operators' listener (`GEOCHAT_ADMIN_HOST`, loopback by default): the
    /// admin API and its page, `/status`, `/metrics`, and the probes.
    func buildAdminRouter(health: HealthRoutes) -> Router<GatewayRequestContext> {
        let router = Router(context: GatewayRequestContext.self)
        if TraceExport.isExporting { router.add(middleware: RequestTracing()) }
        // The admin page's base map may be the operator's tile server.
        router.add(middleware: SecurityHeaders(imageOrigins: settings.map.tileOrigin.map { [$0] } ?? []))
        health.register(on: router)
        guard settings.adminAPI, let adminKeys else { return router }
        AdminPageRoutes(
            webDirectory: settings.webDirectory, leafletDirectory: settings.leafletDirectory, map: settings.map,
            pathPrefix: settings.pathPrefix
        ).register(on: router)
        // Admin requests may wait longer than a client's: a login runs bcrypt, an expiry run starts.
        let adminServices = ServiceClients(bus: services.bus, timeout: max(settings.requestTimeout, .seconds(10)))
        AdminRoutes(
            endpoints: AdminEndpoints(
                backend: AdminBackend(services: adminServices, gateway: instance, logger: logger), sessions: sessions,
                presence: presence, messages: messages, rooms: rooms, settings: settings, throttle: LoginThrottle(),
                keys: adminKeys,
                logger: logger),
            pathPrefix: settings.pathPrefix
        ).register(on: router)
        return router
    }

    /// The public HTTP server on `host:port`, as `main` runs it and the router tests test it.
    func buildApplication(health: HealthRoutes, host: String, port: Int) -> some ApplicationProtocol {
        Application(
            router: buildRouter(health: health),
            server: .http1(configuration: .init(idleTimeout: TimeAmount(settings.idleTimeout))),
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            logger: logger)
    }

    /// The operators' HTTP server on `settings.adminHost:adminPort` (port 0 in tests).
    func buildAdminApplication(health: HealthRoutes, port: Int? = nil) -> some ApplicationProtocol {
        Application(
            router: buildAdminRouter(health: health),
            server: .http1(configuration: .init(idleTimeout: TimeAmount(settings.idleTimeout))),
            configuration: .init(
                address: .hostname(settings.adminHost, port: port ?? settings.adminPort), serverName: nil),
            logger: logger)
    }

    /// The gateway's housekeeping, every loop until shutdown.
    func maintain() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // Live rate settings reach the limiter within a second of arriving.
                while !Task.isCancelled {
                    limiter.update(settings.currentRateLimits)
                    try? await Task.sleep(for: .seconds(1))
                }
            }
            // A message whose event never came is found by its owner's head (issue 13).
            group.addTask { await messages.checkHeads() }
            // Long polls and push subscribers whose wait ran out.
            group.addTask { await messages.signals.expireDeadlines() }
            // Push subscribers that stopped reading.
            group.addTask { await events.closeStalledWrites() }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(30))
                    messages.evictIdle()
                    limiter.prune()
                    participants.prune()
                    sessions.prune(nowMs: WallClock.nowMs())
                    presence.prune(olderThanMs: WallClock.nowMs() - 2 * settings.presenceTimeoutMs - 60_000)
                }
            }
            await group.next()
            group.cancelAll()
        }
    }
}
