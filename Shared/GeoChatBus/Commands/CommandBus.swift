import GeoChatDomain

/// Sends commands to the services that own them and returns their typed replies:
/// over Kafka in a running service (`KafkaCommandBus`), straight to handlers in
/// unit tests (`InMemoryCommandBus`).
public protocol CommandBus: Sendable {
    /// `idempotencyKey` is the same for every retry of one action: the owner does it once.
    func send<Command: WireCommand>(
        _ command: Command, idempotencyKey: String, deadline: Deadline
    ) async throws(RequestError) -> Command.Reply

    /// One way: returns once the owner's topic holds the command (the broker
    /// acknowledged it); the owner runs it and answers nothing. Commands of one
    /// key still run in the order they were posted or sent, so a command sent
    /// after this returns is handled after it.
    func post<Command: WireCommand>(
        _ command: Command, idempotencyKey: String, deadline: Deadline
    ) async throws(RequestError)
}

extension CommandBus {
    /// A command with its own fresh idempotency key, answered within `timeout`.
    public func send<Command: WireCommand>(
        _ command: Command, idempotencyKey: String = IdempotencyKey.random(), within timeout: Duration
    ) async throws(RequestError) -> Command.Reply {
        try await send(command, idempotencyKey: idempotencyKey, deadline: .after(timeout))
    }
}

public enum IdempotencyKey {
    /// 128 random bits.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next(), radix: 36) + "-" + String(generator.next(), radix: 36)
    }
}
