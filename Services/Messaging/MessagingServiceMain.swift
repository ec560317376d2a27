import GeoChatBus
import GeoChatDomain
import GeoChatPostgres
import GeoChatRuntime

/// geochat-messaging: owns `messaging.messages`; gives each post the room's
/// next id, commits it with its outbox row, answers, and publishes it for every
/// gateway (right away, or through the outbox relay).
@main
struct MessagingServiceMain {
    static func main() async throws {
        var host = try ServiceHost(service: "messaging", defaultPort: 9103)
        let database = try host.database()
        let store = PostgresMessageStore(database: database)
        host.migrates(store.migrate)
        let outbox = OutboxRelay(outbox: MessageOutbox(store: store), events: host.events, logger: host.logger)
        let handlers = MessagingCommandHandlers(
            store: store, bus: try host.commandBus(), outbox: outbox, operatorSeal: host.environment.operatorSeal(),
            logger: host.logger)
        try host.handles(handlers.handlers, group: ConsumerGroups.messagingCommands)
        let roomEvents = try host.consumer(
            [Topics.roomEvents], .group(ConsumerGroups.messagingRoomEvents), pace: .background)
        let lifecycle = RoomLifecycleFeed(store: store, consumer: roomEvents, logger: host.logger)
        host.runs("room lifecycle") { await lifecycle.run() }
        host.runs("outbox relay") { await outbox.run() }
        try await host.run()
    }
}
