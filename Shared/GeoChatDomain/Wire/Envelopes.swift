/// Versioned envelopes around every record. `schema` names the version; readers
/// reject schemas they do not know instead of guessing.

public struct RequestEnvelope<Command: Codable & Sendable>: Codable, Sendable {
    public static var schemaName: String { "geochat.request.v1" }
    public var schema: String
    public var correlationID: String
    /// The same for every retry of one client action; services deduplicate on it.
    public var idempotencyKey: String
    public var replyTo: String
    /// Milliseconds since 1970: after this the requester has given up; do nothing.
    public var deadlineMs: Int64
    public var command: Command

    public init(correlationID: String, idempotencyKey: String, replyTo: String, deadlineMs: Int64, command: Command) {
        self.schema = Self.schemaName
        self.correlationID = correlationID
        self.idempotencyKey = idempotencyKey
        self.replyTo = replyTo
        self.deadlineMs = deadlineMs
        self.command = command
    }
}

public struct ReplyEnvelope: Codable, Sendable {
    public static var schemaName: String { "geochat.reply.v1" }
    public var schema: String
    public var correlationID: String
    public var body: ReplyBody?
    public var error: ProtocolError?

    public init(correlationID: String, result: Result<ReplyBody, ProtocolError>) {
        self.schema = Self.schemaName
        self.correlationID = correlationID
        switch result {
        case .success(let body): self.body = body
        case .failure(let error): self.error = error
        }
    }
}

public struct EventEnvelope<Event: Codable & Sendable>: Codable, Sendable {
    public var schema: String
    public var atMs: Int64
    public var event: Event

    public init(schema: String, atMs: Int64, event: Event) {
        self.schema = schema
        self.atMs = atMs
        self.event = event
    }
}

public enum EventSchemas {
    public static let session = "geochat.session.event.v1"
    public static let room = "geochat.rooms.event.v1"
    public static let message = "geochat.messages.event.v1"
    public static let presence = "geochat.presence.v1"
    public static let setting = "geochat.settings.v1"
    public static let ban = "geochat.bans.v1"
}
