import GeoChatBus
import GeoChatDomain
import GeoChatPostgres
import GeoChatRuntime

/// geochat-rooms: owns `rooms.rooms` and memberships; creates rooms, answers
/// region queries, joins and leaves, tracks visits, removes idle rooms on request.
@main
struct RoomsServiceMain {
    static func main() async throws {
        var host = try ServiceHost(service: "rooms", defaultPort: 9102)
        let database = try host.database()
        let store = PostgresRoomStore(database: database)
        host.migrates(store.migrate)
        let outbox = OutboxRelay(outbox: store.outbox, events: host.events, logger: host.logger)
        host.runs("outbox relay") { await outbox.run() }
        let presence = PresenceView()
        // Every instance reads every gateway's batches: `participants` of any room may ask it.
        let sightings = try host.consumer([Topics.presence], .tail, pace: .background)
        host.runs("presence") { await presence.follow(sightings) }
        try host.handles(
            RoomCommandHandlers(
                store: store, outbox: outbox, presence: presence, operatorSeal: host.environment.operatorSeal(),
                logger: host.logger
            ).handlers,
            group: ConsumerGroups.roomsCommands)
        let sessionEvents = try host.consumer(
            SessionMembershipFeed.topics, .group(ConsumerGroups.roomsActivity), pace: .background)
        let feed = SessionMembershipFeed(store: store, logger: host.logger)
        host.runs("session memberships") { await feed.run(sessionEvents) }
        try await host.run()
    }
}
