import Foundation
import GeoChatDomain
import Logging
import Synchronization
import Testing

@testable import GeoChatBus

/// A service's handlers are held to `WireCommands`: one missing is named, and
/// `requireEvery` (what `ServiceHost.handles` runs at start) refuses them.
@Suite struct CommandHandlersTests {
    @Test func aCommandWithoutAHandlerIsNamedAndRefusedAtStart() throws {
        var handlers = CommandHandlers(topic: Topics.expiryCommands)
        handlers.on(ListExpiryJobs.self) { _, _ in [] }
        #expect(Set(handlers.unhandled) == [StartExpiryRun.name, ReadExpiryJob.name])
        #expect(throws: UnhandledCommands(topic: Topics.expiryCommands, commands: handlers.unhandled)) {
            try handlers.requireEvery()
        }
        handlers.on(StartExpiryRun.self) { _, _ in throw ProtocolError.unavailable }
        handlers.on(ReadExpiryJob.self) { _, _ in throw ProtocolError.unavailable }
        #expect(handlers.unhandled.isEmpty)
        try handlers.requireEvery()
    }

    // MARK: From a record to a reply

    private static let logger = Logger(label: "test")
    private static let message = ChatMessage(room: 7, id: 3, nick: "Lydia", text: "hello", addedAt: 1_700_000_000_000)

    /// Messaging's handlers with a `say` that answers `message` and counts its runs.
    private static func sayHandlers(runs: Counter) -> CommandHandlers {
        var handlers = CommandHandlers(topic: Topics.messagingCommands)
        handlers.on(Say.self) { _, _ in
            runs.add()
            return message
        }
        return handlers
    }

    private static func record(
        _ command: Say = Say(room: 7, session: nil, nick: "Lydia", text: try! MessageText(checking: "hello")),
        deadlineMs: Int64 = WallClock.nowMs() + 10_000, replyTo: String = Topics.replies(instance: "test")
    ) -> [UInt8] {
        let envelope = RequestEnvelope(
            correlationID: "c-1", idempotencyKey: "k-1", replyTo: replyTo, deadlineMs: deadlineMs, command: command)
        return Array(try! JSONEncoder().encode(envelope))
    }

    private static func replacing(_ old: String, with new: String, in record: [UInt8]) -> [UInt8] {
        let text = String(decoding: record, as: UTF8.self)
        #expect(text.contains(old))
        return Array(text.replacingOccurrences(of: old, with: new).utf8)
    }

    @Test func aCommandIsRunOnceAndAnsweredWithItsReply() async throws {
        let runs = Counter()
        let (header, outcome) = await Self.sayHandlers(runs: runs).handle(Self.record(), logger: Self.logger)
        #expect(header?.commandName == Say.name && header?.correlationID == "c-1")
        guard case .answered(let reply, let failed, _) = outcome else {
            Issue.record("not answered: \(outcome)")
            return
        }
        #expect(!failed)
        #expect(runs.count == 1)
        let envelope = try JSONDecoder().decode(ReplyEnvelope<ChatMessage>.self, from: Data(reply.bytes))
        #expect(envelope.correlationID == "c-1")
        #expect(try envelope.result?.get() == Self.message)
    }

    @Test func aCommandPastItsDeadlineIsDroppedUnrun() async {
        let runs = Counter()
        let (_, outcome) = await Self.sayHandlers(runs: runs).handle(
            Self.record(deadlineMs: WallClock.nowMs() - 1), logger: Self.logger)
        guard case .dropped(.deadline, _) = outcome else {
            Issue.record("not dropped for its deadline: \(outcome)")
            return
        }
        #expect(runs.count == 0)
    }

    @Test func aRecordOfAnotherSchemaIsDroppedUnrun() async {
        let runs = Counter()
        let record = Self.replacing(RequestHeader.schemaName, with: "geochat.request.v9", in: Self.record())
        let (header, outcome) = await Self.sayHandlers(runs: runs).handle(record, logger: Self.logger)
        #expect(header?.schema == "geochat.request.v9")
        guard case .dropped(.schema, _) = outcome else {
            Issue.record("not dropped for its schema: \(outcome)")
            return
        }
        #expect(runs.count == 0)
    }

    @Test func aCommandWithNoHandlerHereIsDroppedByName() async {
        let record = Self.replacing("\"say\"", with: "\"shout\"", in: Self.record())
        let (header, outcome) = await Self.sayHandlers(runs: Counter()).handle(record, logger: Self.logger)
        #expect(header?.commandName == "shout")
        guard case .dropped(.unknownCommand, "shout") = outcome else {
            Issue.record("not dropped as unknown: \(outcome)")
            return
        }
    }

    @Test func aRecordThatIsNoRequestIsDroppedUndecodable() async {
        for bytes in [Array("hello".utf8), Array("{\"schema\": 1}".utf8), []] {
            let (header, outcome) = await Self.sayHandlers(runs: Counter()).handle(bytes, logger: Self.logger)
            #expect(header == nil)
            guard case .dropped(.undecodable, _) = outcome else {
                Issue.record("not dropped as undecodable: \(outcome)")
                continue
            }
        }
    }

    /// A command whose value breaks its type's rule (a text too long) is bad
    /// input: refused with the rule's error, the handler not run. Anything
    /// else wrong in the command is a foreign producer: dropped.
    @Test func aCommandBreakingItsTypesRuleIsRefusedWithTheRule() async throws {
        let runs = Counter()
        let tooLong = String(repeating: "x", count: Limits.messageLength.upperBound + 1)
        let record = Self.replacing("\"hello\"", with: "\"\(tooLong)\"", in: Self.record())
        let (header, outcome) = await Self.sayHandlers(runs: runs).handle(record, logger: Self.logger)
        #expect(header?.correlationID == "c-1")
        guard case .answered(let reply, let failed, _) = outcome else {
            Issue.record("not refused: \(outcome)")
            return
        }
        #expect(failed)
        #expect(runs.count == 0)
        let envelope = try JSONDecoder().decode(ReplyEnvelope<ChatMessage>.self, from: Data(reply.bytes))
        #expect(envelope.correlationID == "c-1")
        let ruleError: ProtocolError? = {
            do throws(ProtocolError) {
                _ = try MessageText(checking: tooLong)
                return nil
            } catch { return error }
        }()
        #expect(ruleError != nil && envelope.error?.code == ruleError?.code)

        let wrongType = Self.replacing("\"hello\"", with: "42", in: Self.record())
        guard
            case .dropped(.undecodable, _) = await Self.sayHandlers(runs: runs).handle(wrongType, logger: Self.logger)
                .outcome
        else {
            Issue.record("a text that is a number was not dropped")
            return
        }
        #expect(runs.count == 0)
    }

    /// Most replies are never sent (a posted command's, a success another
    /// record carries): a reply is encoded only when its bytes are read.
    @Test func aReplyIsEncodedOnlyWhenItsBytesAreRead() async throws {
        let encodes = Counter()
        var handlers = CommandHandlers(topic: CountedProbe.topic)
        handlers.on(CountedProbe.self) { _, _ in CountedProbe.Counted(encodes: encodes) }
        let envelope = RequestEnvelope(
            correlationID: "c-2", idempotencyKey: "k-2", replyTo: "", deadlineMs: WallClock.nowMs() + 10_000,
            command: CountedProbe())
        let (_, outcome) = await handlers.handle(Array(try JSONEncoder().encode(envelope)), logger: Self.logger)
        guard case .answered(let reply, false, _) = outcome else {
            Issue.record("not answered: \(outcome)")
            return
        }
        #expect(encodes.count == 0)
        #expect(!reply.bytes.isEmpty)
        #expect(encodes.count == 1)
    }
}

/// How many times something happened, from any task.
private final class Counter: Sendable {
    private let value = Mutex(0)
    func add() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// A command of a test topic whose reply counts its encodings.
private struct CountedProbe: WireCommand {
    struct Counted: Codable, Sendable {
        let encodes: Counter?

        init(encodes: Counter) { self.encodes = encodes }
        init(from decoder: any Decoder) throws { encodes = nil }

        func encode(to encoder: any Encoder) throws {
            encodes?.add()
            _ = encoder.container(keyedBy: WireKey.self)
        }
    }

    private struct WireKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    typealias Reply = Counted
    static let name = "countedProbe"
    static let topic = "geochat.test.counted"
    var partitionKey: String? { nil }
}
