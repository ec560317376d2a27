import GeoChatBus
import GeoChatDomain
import GeoChatKafka

/// The gateway's way to the services: a command on the bus, answered within the
/// gateway's request timeout; every failure already the protocol error the
/// client should see.
package struct ServiceClients: Sendable {
    package let bus: any CommandBus
    package let timeout: Duration

    package init(bus: any CommandBus, timeout: Duration) {
        self.bus = bus
        self.timeout = timeout
    }

    package func send<Command: WireCommand>(
        _ command: Command, idempotencyKey: String = IdempotencyKey.random()
    ) async throws(ProtocolError) -> Command.Reply {
        do {
            return try await bus.send(command, idempotencyKey: idempotencyKey, within: timeout)
        } catch {
            throw error.protocolError
        }
    }

    /// One way (`CommandBus.post`): handed to the producer now, the delivery
    /// ends with the broker's acknowledgement, within the same timeout.
    package func post<Command: WireCommand>(_ command: Command, idempotencyKey: String) async -> RecordDelivery {
        await bus.post(command, idempotencyKey: idempotencyKey, deadline: .after(timeout))
    }

    package func history(room: RoomID, after: MessageID?, limit: Int, skipRemoved: Bool) async throws(ProtocolError)
        -> MessageHistory
    {
        try await send(ReadHistory(room: room, after: after, limit: limit, skipRemoved: skipRemoved))
    }
}
