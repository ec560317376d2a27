import GeoChatDomain
import GeoChatKafka

/// Sends commands to the services that own them and returns their typed replies:
/// over Kafka in a running service (`KafkaCommandBus`), straight to handlers in
/// unit tests (`InMemoryCommandBus`).
public protocol CommandBus: Sendable {
    /// `idempotencyKey` is the same for every retry of one action: the owner does it once.
    func send<Command: WireCommand>(
        _ command: Command, idempotencyKey: String, deadline: Deadline
    ) async throws(RequestError) -> Command.Reply

    /// One way, without waiting: the command is handed to the producer now
    /// (handed one after another, commands of one key keep their order) and
    /// the owner runs it and answers nothing; the delivery ends with the
    /// broker's acknowledgement. A command sent once that delivery ended is
    /// handled after it.
    func post<Command: WireCommand>(
        _ command: Command, idempotencyKey: String, deadline: Deadline
    ) async -> RecordDelivery

    /// The reply to this instance's request `correlationID`, carried by a
    /// record its requester reads anyway instead of a reply record (a say's
    /// message event: `EventEnvelope.answers`, `CommandContext.answeredBy`).
    /// Nothing happens if no request of this instance waits for it.
    func answered(_ correlationID: String, by reply: any Sendable)
}

extension CommandBus {
    /// A command with its own fresh idempotency key, answered within `timeout`.
    public func send<Command: WireCommand>(
        _ command: Command, idempotencyKey: String = IdempotencyKey.random(), within timeout: Duration
    ) async throws(RequestError) -> Command.Reply {
        try await send(command, idempotencyKey: idempotencyKey, deadline: .after(timeout))
    }
}
