/// Versioned envelopes around every record. `schema` names the version; readers
/// reject schemas they do not know instead of guessing.

/// A command on its owner's topic: `command` is an object with one key, the
/// command's name (`{"say": {"room": 7, …}}`), so a reader learns which
/// command it holds before decoding it.
public struct RequestEnvelope<Command: WireCommand>: Codable, Sendable {
    public static var schemaName: String { RequestHeader.schemaName }
    public var schema: String
    public var correlationID: String
    /// The same for every retry of one client action; services deduplicate on it.
    public var idempotencyKey: String
    public var replyTo: String
    /// Milliseconds since 1970: after this the requester has given up; do nothing.
    public var deadlineMs: Int64
    /// Milliseconds since 1970 when the requester sent it (optional: for the
    /// owner's `geochat_command_wait_seconds`, the time a command spent getting there).
    public var sentAtMs: Int64?
    /// The requester reads the event topics (a gateway): a reply may travel in
    /// the event its command announces (`EventEnvelope.answers`) instead of a
    /// reply record. Absent: false.
    public var readsEvents: Bool?
    public var command: Command

    public init(
        correlationID: String, idempotencyKey: String, replyTo: String, deadlineMs: Int64, sentAtMs: Int64? = nil,
        readsEvents: Bool? = nil, command: Command
    ) {
        self.schema = Self.schemaName
        self.correlationID = correlationID
        self.idempotencyKey = idempotencyKey
        self.replyTo = replyTo
        self.deadlineMs = deadlineMs
        self.sentAtMs = sentAtMs
        self.readsEvents = readsEvents
        self.command = command
    }

    private enum CodingKeys: String, CodingKey {
        case schema, correlationID, idempotencyKey, replyTo, deadlineMs, sentAtMs, readsEvents, command
    }

    public init(from decoder: any Decoder) throws {
        let header = try RequestHeader(from: decoder)
        schema = header.schema
        correlationID = header.correlationID
        idempotencyKey = header.idempotencyKey
        replyTo = header.replyTo
        deadlineMs = header.deadlineMs
        sentAtMs = header.sentAtMs
        readsEvents = header.readsEvents
        let named = try decoder.container(keyedBy: CodingKeys.self).nestedContainer(
            keyedBy: WireName.self, forKey: .command)
        command = try named.decode(Command.self, forKey: WireName(Command.name))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(schema, forKey: .schema)
        try container.encode(correlationID, forKey: .correlationID)
        try container.encode(idempotencyKey, forKey: .idempotencyKey)
        try container.encode(replyTo, forKey: .replyTo)
        try container.encode(deadlineMs, forKey: .deadlineMs)
        try container.encodeIfPresent(sentAtMs, forKey: .sentAtMs)
        try container.encodeIfPresent(readsEvents, forKey: .readsEvents)
        var named = container.nestedContainer(keyedBy: WireName.self, forKey: .command)
        try named.encode(command, forKey: WireName(Command.name))
    }
}

/// What a command processor reads first: the envelope without its command,
/// and the command's name, to find the handler that decodes the rest.
public struct RequestHeader: Decodable, Sendable {
    public static let schemaName = "geochat.request.v1"
    // The keys of `RequestEnvelope`, which decodes through this header.
    public var schema: String
    public var correlationID: String
    public var idempotencyKey: String
    public var replyTo: String
    public var deadlineMs: Int64
    public var sentAtMs: Int64?
    public var readsEvents: Bool?
    public var commandName: String

    private enum CodingKeys: String, CodingKey {
        case schema, correlationID, idempotencyKey, replyTo, deadlineMs, sentAtMs, readsEvents, command
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        schema = try container.decode(String.self, forKey: .schema)
        correlationID = try container.decode(String.self, forKey: .correlationID)
        idempotencyKey = try container.decode(String.self, forKey: .idempotencyKey)
        replyTo = try container.decode(String.self, forKey: .replyTo)
        deadlineMs = try container.decode(Int64.self, forKey: .deadlineMs)
        sentAtMs = try container.decodeIfPresent(Int64.self, forKey: .sentAtMs)
        readsEvents = try container.decodeIfPresent(Bool.self, forKey: .readsEvents)
        let named = try container.nestedContainer(keyedBy: WireName.self, forKey: .command)
        guard named.allKeys.count == 1, let name = named.allKeys.first else {
            throw DecodingError.dataCorruptedError(
                forKey: .command, in: container,
                debugDescription: "a command is an object with exactly one key, its name")
        }
        commandName = name.stringValue
    }
}

/// The answer to one command: its reply, or the protocol error it was refused with.
public struct ReplyEnvelope<Reply: Codable & Sendable>: Codable, Sendable {
    public static var schemaName: String { ReplyHeader.schemaName }
    public var schema: String
    public var correlationID: String
    /// Milliseconds since 1970 when the owner answered (optional: for the
    /// requester's `geochat_reply_travel_seconds`).
    public var sentAtMs: Int64?
    public var reply: Reply?
    public var error: ProtocolError?

    /// The reply, or the protocol error the command was refused with; nil for an envelope with neither.
    public var result: Result<Reply, ProtocolError>? {
        if let error { return .failure(error) }
        return reply.map { .success($0) }
    }

    public init(correlationID: String, sentAtMs: Int64? = nil, result: Result<Reply, ProtocolError>) {
        self.schema = Self.schemaName
        self.correlationID = correlationID
        self.sentAtMs = sentAtMs
        switch result {
        case .success(let reply): self.reply = reply
        case .failure(let error): self.error = error
        }
    }
}

/// What a requester reads first: whose reply this is.
public struct ReplyHeader: Decodable, Sendable {
    public static let schemaName = "geochat.reply.v2"
    public var schema: String
    public var correlationID: String
    public var sentAtMs: Int64?
}

public struct EventEnvelope<Event: Codable & Sendable>: Codable, Sendable {
    public var schema: String
    public var atMs: Int64
    public var event: Event
    /// The correlation id of the request this event answers, on the event its
    /// handler announced (a say's `MessageStored`, a create's `created`): the
    /// requester reads these events anyway, so the event is the reply and no
    /// reply record is sent (docs/architecture.md, "Request/reply"). Absent on
    /// repeats and on what an outbox relay publishes.
    public var answers: String?

    public init(schema: String, atMs: Int64, event: Event, answers: String? = nil) {
        self.schema = schema
        self.atMs = atMs
        self.event = event
        self.answers = answers
    }
}

/// A JSON object key chosen at run time: a command's name.
struct WireName: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
