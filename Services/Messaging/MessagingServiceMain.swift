import GeoChatDomain
import GeoChatPostgres
import GeoChatRuntime

/// geochat-messaging: owns `messaging.messages`; gives each post the room's
/// next id, commits it, answers, and publishes it for every gateway.
@main
struct MessagingServiceMain {
    static func main() async throws {
        var host = try ServiceHost(service: "messaging", defaultPort: 9103)
        let database = try host.database()
        let store = PostgresMessageStore(database: database)
        host.migrates(store.migrate)
        let unpublished = UnpublishedMessages()
        let events = host.events
        let handlers = MessagingCommandHandlers(
            store: store, bus: try host.commandBus(), events: events, unpublished: unpublished, logger: host.logger)
        try host.handles(handlers.handlers, group: ConsumerGroups.messagingCommands)
        let roomEvents = try host.consumer([Topics.roomEvents], .group(ConsumerGroups.messagingRoomEvents), pace: .background)
        let lifecycle = RoomLifecycleFeed(store: store, consumer: roomEvents, logger: host.logger)
        host.runs("room lifecycle") { await lifecycle.run() }
        host.runs("late events") { [logger = host.logger] in
            await unpublished.relay(logger: logger) { try await events.publish($0) }
        }
        try await host.run()
    }
}
