import Foundation
import GeoChatDomain
import GeoChatKafka
import Logging
import Synchronization

/// A service's handlers for the commands of one topic, by command name, and
/// the one place a request becomes a reply: the schema and deadline checks, the
/// time a handler gets, and which failures the requester is told about how.
public struct CommandHandlers: Sendable {
    public typealias Handler<Command: WireCommand> = @Sendable (Command, CommandContext) async throws -> Command.Reply

    public let topic: String
    private var table: [String: @Sendable (RequestHeader, Data, Logger) async -> Outcome] = [:]

    public init(topic: String) { self.topic = topic }

    /// Registers the handler of a command only operators' tools may send: one
    /// without a valid `OperatorSeal` is refused (`bad_param`, nothing done) before the handler runs.
    public mutating func on<Command: OperatorCommand>(
        _ type: Command.Type, sealedWith seal: OperatorSeal, _ handler: @escaping Handler<Command>
    ) {
        on(type) { command, context in
            guard seal.verifies(command) else {
                throw ProtocolError(
                    .badParam, "\(Command.name) is not sealed with this cluster's operator key (GEOCHAT_OPERATOR_KEY)")
            }
            return try await handler(command, context)
        }
    }

    /// Registers the handler of one command type. Handlers throw a `ProtocolError`
    /// to refuse; anything else they throw is answered `unavailable`.
    public mutating func on<Command: WireCommand>(_ type: Command.Type, _ handler: @escaping Handler<Command>) {
        precondition(Command.topic == topic, "\(Command.name) belongs on \(Command.topic), not \(topic)")
        precondition(table[Command.name] == nil, "two handlers for \(Command.name)")
        table[Command.name] = { header, bytes, logger in
            let envelope: RequestEnvelope<Command>
            do { envelope = try JSONDecoder().decode(RequestEnvelope<Command>.self, from: bytes) } catch {
                // A value that breaks its type's rule (`CheckedText`: a text too
                // long) is bad input, refused with the rule's error; anything
                // else undecodable is a version skew or a foreign producer.
                guard let refused = (error as? DecodingError)?.brokenRule else {
                    return .dropped(.undecodable, "\(error)")
                }
                let refusal: Result<Command.Reply, ProtocolError> = .failure(refused)
                return .answered(
                    ReplyRecord {
                        Self.replyRecord(
                            refusal, correlationID: header.correlationID, command: Command.name, logger: logger)
                    }, failed: true, carriedBy: ReplyCarrier())
            }
            let context = CommandContext(
                idempotencyKey: envelope.idempotencyKey, correlationID: envelope.correlationID,
                deadline: Deadline(epochMs: envelope.deadlineMs),
                requester: Topics.requester(ofReplyTopic: envelope.replyTo),
                requesterReadsEvents: envelope.readsEvents ?? false)
            let result = await Self.answer(context, logger: logger) { try await handler(envelope.command, context) }
            let correlationID = envelope.correlationID
            // Encoded only if it is sent: a posted command's reply and a success
            // another record carries (a say's) never are.
            return .answered(
                ReplyRecord {
                    Self.replyRecord(result, correlationID: correlationID, command: Command.name, logger: logger)
                },
                failed: (try? result.get()) == nil, carriedBy: context.replyCarrier)
        }
    }

    /// The reply record of `result`. One that cannot be encoded is a bug; the
    /// requester still gets an answer (`unavailable`).
    private static func replyRecord<Reply: Codable & Sendable>(
        _ result: Result<Reply, ProtocolError>, correlationID: String, command: String, logger: Logger
    ) -> [UInt8] {
        let reply = ReplyEnvelope(correlationID: correlationID, sentAtMs: WallClock.nowMs(), result: result)
        if let encoded = try? JSONEncoder().encode(reply) { return Array(encoded) }
        logger.error("reply not encodable", metadata: ["command": "\(command)"])
        let unavailable = ReplyEnvelope<Reply>(correlationID: correlationID, result: .failure(.unavailable))
        return Array((try? JSONEncoder().encode(unavailable)) ?? Data())
    }

    /// The commands of this topic (`WireCommands.owned(by:)`) with no handler here.
    public var unhandled: [String] { WireCommands.owned(by: topic).map { $0.name }.filter { table[$0] == nil } }

    /// Throws unless every command of the topic has a handler: a service starts
    /// able to answer all of its commands, or not at all (never a command
    /// dropped as `unknown_command` at run time).
    public func requireEvery() throws(UnhandledCommands) {
        let missing = unhandled
        guard missing.isEmpty else { throw UnhandledCommands(topic: topic, commands: missing) }
    }

    public enum DropReason: String, Sendable {
        case undecodable, schema, deadline
        case unknownCommand = "unknown_command"
    }

    public enum Outcome: Sendable {
        /// The reply; not sent for a posted command, nor for a success another record carries (`ReplyCarrier`).
        case answered(ReplyRecord, failed: Bool, carriedBy: ReplyCarrier)
        case dropped(DropReason, String)
    }

    /// Runs the command in `bytes` (a `RequestEnvelope`). A command past its
    /// deadline is dropped unanswered: its requester has already told the client
    /// "unavailable, nothing was done", so it must stay undone.
    public func handle(_ bytes: [UInt8], logger: Logger) async -> (header: RequestHeader?, outcome: Outcome) {
        let data = Data(bytes)
        let header: RequestHeader
        do { header = try JSONDecoder().decode(RequestHeader.self, from: data) } catch {
            return (nil, .dropped(.undecodable, "\(error)"))
        }
        guard header.schema == RequestHeader.schemaName else { return (header, .dropped(.schema, header.schema)) }
        guard !Deadline(epochMs: header.deadlineMs).hasPassed() else { return (header, .dropped(.deadline, "")) }
        guard let run = table[header.commandName] else {
            return (header, .dropped(.unknownCommand, header.commandName))
        }
        if let sentAtMs = header.sentAtMs {
            BusMetrics.commandWait[header.commandName].recordNanoseconds(
                max(0, WallClock.nowMs() - sentAtMs) * 1_000_000)
        }
        return (header, await run(header, data, logger))
    }

    /// Runs `work` within the time its requester still waits. Protocol errors go
    /// back as they are; anything else (PostgreSQL away) is `unavailable`, so
    /// the client may retry — but work that ran out of time may yet commit, so
    /// that is "outcome unknown", never "nothing was done".
    static func answer<Reply: Sendable>(
        _ context: CommandContext, logger: Logger, _ work: @escaping @Sendable () async throws -> Reply
    ) async -> Result<Reply, ProtocolError> {
        let workDeadline = context.deadline.forWork
        guard !workDeadline.hasPassed() else { return .failure(.unavailable) }
        do {
            return .success(try await bounded(by: workDeadline.remaining(), work))
        } catch let error as ProtocolError {
            return .failure(error)
        } catch is DeadlineExceeded {
            logger.warning("command ran out of time", metadata: ["correlation": "\(context.correlationID)"])
            return .failure(.outcomeUnknown)
        } catch {
            logger.warning(
                "command failed; answering unavailable",
                metadata: ["correlation": "\(context.correlationID)", "error": "\(String(reflecting: error))"])
            return .failure(.unavailable)
        }
    }
}

/// A handler's reply, encoded when it is sent (`bytes`): most are never sent.
public struct ReplyRecord: Sendable {
    private let encode: @Sendable () -> [UInt8]

    init(_ encode: @escaping @Sendable () -> [UInt8]) { self.encode = encode }

    /// The record's value (a `ReplyEnvelope`).
    public var bytes: [UInt8] { encode() }
}

/// A service's handlers miss commands of their topic (`CommandHandlers.requireEvery`).
public struct UnhandledCommands: Error, Equatable, CustomStringConvertible {
    public let topic: String
    public let commands: [String]

    public var description: String {
        "no handler on \(topic) for \(commands.joined(separator: ", ")): every command in WireCommands.all needs one"
    }
}
