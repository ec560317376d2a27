import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import GeoChatTestSupport
import Logging

@testable import RoomsService

/// The rooms service's command handlers over an in-memory store and event log,
/// each command sent through the in-memory bus: what the handler tests share.
protocol RoomsServiceHarness {
    var bus: InMemoryCommandBus { get }
    /// The session the harness's rooms are made by.
    var alice: SessionID { get }
}

extension RoomsServiceHarness {
    static func bus(
        store: InMemoryRoomStore, events: RecordedEvents, presence: PresenceView = PresenceView(),
        operators: OperatorSeal
    ) -> InMemoryCommandBus {
        InMemoryCommandBus([
            RoomCommandHandlers(
                store: store, outbox: OutboxRelay(outbox: store.outbox, events: events, logger: Logger(label: "test")),
                presence: presence, operatorSeal: operators, logger: Logger(label: "test")
            ).handlers
        ])
    }

    func send<Command: WireCommand>(_ command: Command) async throws(RequestError) -> Command.Reply {
        try await bus.send(command, within: TestPatience.deadline)
    }

    func create(_ topic: String, x: Double = 0.25, y: Double = 0.25, z: Int = 9) async throws -> RoomInfo {
        try await send(
            CreateRoom(
                session: alice, position: MercatorPoint(x: x, y: y)!, zoom: ZoomLevel(z)!,
                topic: try RoomTopic(checking: topic)))
    }
}
