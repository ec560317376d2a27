import GatewayCore
import GeoChatBus
import GeoChatDomain
import GeoChatMetrics
import GeoChatRuntime
import Metrics

/// geochat-gateway: speaks the legacy XML protocol over HTTP. Holds no database:
/// writes go to the owning services as Kafka commands, reads come from read
/// models fed by event topics.
@main
struct GatewayMain {
    static func main() async throws {
        var host = try ServiceHost(service: "gateway", defaultPort: 8080)
        let settings = try GatewaySettings(host.configuration)
        let gateway = Gateway(
            instance: host.environment.instanceID, settings: settings, bus: try host.commandBus(readsEvents: true),
            adminKeys: settings.adminAPI
                ? AdminKeys(login: host.environment.loginSeal(), operatorCommands: host.environment.operatorSeal())
                : nil,
            logger: host.logger)
        ReadModelMetrics.register(gateway: gateway)

        let adminState = SettingsAndBansFeed(
            consumer: try host.consumer(SettingsAndBansFeed.topics, .replay, pace: .background),
            settings: settings.live, bans: gateway.bans, logger: host.logger)
        host.runs("settings and bans") { await adminState.run() }
        host.readyWhen { adminState.isLoaded }

        let events = try host.consumer(EventFeed.topics, .tail, pace: .interactive)
        // A broker that restarted without its topics lost the events of messages acknowledged just before.
        events.whenTopicsRemade { [messages = gateway.messages] topics in
            if topics.contains(Topics.messageEvents) { messages.eventsMayBeLost() }
        }
        let feed = EventFeed(
            consumer: events, messages: gateway.messages,
            rooms: gateway.rooms, sessions: gateway.sessions, participants: gateway.participants,
            requests: gateway.services.bus, logger: host.logger)
        host.runs("event feed") { await feed.run() }
        // The feed's positions are fixed before components run: the load cannot miss an event.
        host.runs("room index") { [logger = host.logger] in
            // No client waits on a page: a slow one is waited for rather than asked again.
            let loading = ServiceClients(bus: gateway.services.bus, timeout: max(settings.requestTimeout, .seconds(30)))
            let snapshot = await settings.roomSnapshot?.read(logger: logger)
            if let load = await gateway.rooms.loadAll(
                from: loading, ranges: settings.indexLoadRanges, snapshot: snapshot, logger: logger)
            {
                let source = load == .everyRoom ? "rooms_service" : "snapshot"
                Counter(label: MetricNames.gatewayRoomIndexLoads, dimensions: [("source", source)]).increment()
            }
            if let file = settings.roomSnapshot {
                await file.keep(gateway.rooms, every: settings.roomSnapshotInterval, logger: logger)
            } else {
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            }
        }
        host.readyWhen { gateway.rooms.isLoaded }
        host.runs("presence") { [events = host.events] in
            await gateway.presence.publishLoop(events: events, every: .milliseconds(500))
        }
        host.runs("maintenance") { await gateway.maintain() }
        host.reports {
            [
                "sessions": "\(gateway.sessions.count)", "rooms": "\(gateway.messages.roomCount)",
                "rooms_indexed": "\(gateway.rooms.count)", "push_subscribers": "\(gateway.events.subscribers)",
            ]
        }
        host.serves { [environment = host.environment] health in
            [
                gateway.buildApplication(health: health, host: environment.httpHost, port: environment.httpPort),
                gateway.buildAdminApplication(health: health),
            ]
        }
        try await host.run()
    }
}
