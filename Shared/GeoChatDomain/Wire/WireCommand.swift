/// A command to the service that owns it, as it travels on Kafka. The type is
/// the contract: its owner's topic, the key that orders it, and what it is
/// answered with. `bus.send(command)` returns a `Reply` or throws.
public protocol WireCommand: Codable, Sendable {
    associatedtype Reply: Codable & Sendable
    /// The command's name on the wire: the one key of the envelope's `command` object.
    static var name: String { get }
    /// The owning service's command topic.
    static var topic: String { get }
    /// Commands with one key are handled in order (same partition, same lane);
    /// nil: the request's idempotency key, for commands that need no order.
    var partitionKey: String? { get }
}

/// The answer of a command that only reports success.
public struct Done: Codable, Sendable, Equatable {
    public init() {}
}

/// Commands owned by the session service.
public protocol SessionWireCommand: WireCommand {}
extension SessionWireCommand {
    public static var topic: String { Topics.sessionCommands }
}

/// Commands owned by the rooms service.
public protocol RoomsWireCommand: WireCommand {}
extension RoomsWireCommand {
    public static var topic: String { Topics.roomsCommands }
}

/// Commands owned by the messaging service.
public protocol MessagingWireCommand: WireCommand {}
extension MessagingWireCommand {
    public static var topic: String { Topics.messagingCommands }
}

/// Commands owned by the expiry service; one job runs at a time, so one key orders them all.
public protocol ExpiryWireCommand: WireCommand {}
extension ExpiryWireCommand {
    public static var topic: String { Topics.expiryCommands }
    public var partitionKey: String? { "expiry" }
}

/// Administration commands, owned by the session service (accounts, tokens,
/// bans, settings, the audit log; docs/architecture.md, "Administration").
public protocol AdminWireCommand: WireCommand {}
extension AdminWireCommand {
    public static var topic: String { Topics.adminCommands }
}

/// Every command, by the service that owns it: the one list a service's
/// handlers are held to. A service does not start while a command of its topic
/// has no handler (`CommandHandlers.requireEvery`), and `WireCommandsTests`
/// fails for a command type declared in `Wire/` but missing here. Each owner's
/// part is listed beside its commands (`sessionCommands` in
/// `SessionCommands.swift`, …), so a new command is one file of the wire.
public enum WireCommands {
    public static var all: [any WireCommand.Type] {
        sessionCommands + adminCommands + roomsCommands + messagingCommands + expiryCommands
    }

    /// The commands the service reading `topic` must handle.
    public static func owned(by topic: String) -> [any WireCommand.Type] { all.filter { $0.topic == topic } }
}
