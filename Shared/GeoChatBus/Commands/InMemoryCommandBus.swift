import Foundation
import GeoChatDomain
import GeoChatKafka
import Logging
import Synchronization

/// A command bus without Kafka, for unit tests: a command goes through the same
/// encoding, handler lookup, deadline and error mapping as over Kafka, straight
/// to the handlers registered for its topic. Records what was sent.
public final class InMemoryCommandBus: CommandBus {
    private let handlers: Mutex<[String: CommandHandlers]>
    private let sent = Mutex<[(name: String, key: String)]>([])
    private let logger: Logger

    public init(_ handlers: [CommandHandlers] = [], logger: Logger = Logger(label: "in-memory-bus")) {
        self.handlers = Mutex(Dictionary(handlers.map { ($0.topic, $0) }) { _, last in last })
        self.logger = logger
    }

    /// Adds (or replaces) the handlers of one topic.
    public func register(_ topicHandlers: CommandHandlers) {
        handlers.withLock { $0[topicHandlers.topic] = topicHandlers }
    }

    /// The names and partition keys of the commands sent so far, in order.
    public var sentCommands: [(name: String, key: String)] { sent.withLock { $0 } }

    public func send<Command: WireCommand>(
        _ command: Command, idempotencyKey: String, deadline: Deadline
    ) async throws(RequestError) -> Command.Reply {
        sent.withLock { $0.append((Command.name, command.partitionKey ?? idempotencyKey)) }
        guard let topicHandlers = handlers.withLock({ $0[Command.topic] }) else {
            throw .timedOut  // nobody reads that topic
        }
        let envelope = RequestEnvelope(
            correlationID: UUID().uuidString, idempotencyKey: idempotencyKey,
            replyTo: Topics.replies(instance: "memory"),
            deadlineMs: deadline.epochMs, command: command)
        let bytes: [UInt8]
        do { bytes = Array(try JSONEncoder().encode(envelope)) } catch { throw .notSent("encode: \(error)") }
        switch await topicHandlers.handle(bytes, logger: logger).outcome {
        case .dropped(let reason, _) where reason == .deadline || reason == .unknownCommand:
            throw .timedOut
        case .dropped(let reason, let detail):
            throw .unexpectedReply("\(reason.rawValue): \(detail)")
        case .answered(let record, _, _):
            // Handed to the caller as it is, whatever record would carry it over Kafka.
            return try Command.reply(from: record.bytes)
        }
    }

    /// Runs the command before it returns (the posted command's handler has run once this returns).
    public func post<Command: WireCommand>(
        _ command: Command, idempotencyKey: String, deadline: Deadline
    ) async -> RecordDelivery {
        sent.withLock { $0.append((Command.name, command.partitionKey ?? idempotencyKey)) }
        // Nobody reads its topic: as Kafka would, the broker holds it.
        guard let topicHandlers = handlers.withLock({ $0[Command.topic] }) else { return .completed(nil) }
        let envelope = RequestEnvelope(
            correlationID: UUID().uuidString, idempotencyKey: idempotencyKey, replyTo: "", deadlineMs: deadline.epochMs,
            command: command)
        do {
            _ = await topicHandlers.handle(Array(try JSONEncoder().encode(envelope)), logger: logger)
            return .completed(nil)
        } catch {
            return .completed(RequestError.notSent("encode: \(error)"))
        }
    }

    /// Requests here are answered by their handler's return: nothing waits for another record.
    public func answered(_ correlationID: String, by reply: any Sendable) {}
}
