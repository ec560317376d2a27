/// An error as the legacy clients see it: a code they act on, a text for people,
/// and the HTTP status that goes with the code (contract 6).
public struct ProtocolError: Error, Equatable, Sendable, Codable {
    public enum Code: String, Sendable, Codable, CaseIterable {
        case missingParam = "missing_param"
        case badParam = "bad_param"
        case invalidNick = "invalid_nick"
        case empty
        case tooLong = "too_long"
        case unknownCommand = "unknown_command"
        case unsupportedVersion = "unsupported_version"
        case invalidSession = "invalid_session"
        case banned
        case noSuchChat = "no_such_chat"
        case tooLarge = "too_large"
        case rateLimited = "rate_limited"
        case unavailable

        public var httpStatus: Int {
            switch self {
            case .missingParam, .badParam, .invalidNick, .empty, .tooLong, .unknownCommand, .unsupportedVersion: 400
            case .invalidSession, .banned: 403
            case .noSuchChat: 404
            case .tooLarge: 413
            case .rateLimited: 429
            case .unavailable: 503
            }
        }
    }

    public let code: Code
    public let text: String
    /// When a refused client may try again (`rate_limited`): the surfaces send
    /// it as `Retry-After`. Nil: come back in a second.
    public var retryAfterSeconds: Int?

    public init(_ code: Code, _ text: String, retryAfterSeconds: Int? = nil) {
        self.code = code
        self.text = text
        self.retryAfterSeconds = retryAfterSeconds
    }

    public static func missing(_ name: String) -> ProtocolError {
        .init(.missingParam, "parameter '\(name)' is missing")
    }
    public static func bad(_ name: String, _ why: String) -> ProtocolError {
        .init(.badParam, "parameter '\(name)' \(why)")
    }
    public static let invalidSession = ProtocolError(.invalidSession, "session is unknown or has ended")
    public static let invalidNick = ProtocolError(
        .invalidNick, "a nickname is 1 to 32 ASCII letters, digits or '_', starting with a letter")
    public static let noSuchChat = ProtocolError(.noSuchChat, "no such chat room")
    public static let unavailable = ProtocolError(.unavailable, "the service is temporarily unavailable, try again")
    /// Also `unavailable`, but said when no answer came in time: the request may
    /// have been carried out (e.g. a message stored just before its owner died).
    /// Clients act on the code alike; the text tells people, and the fault
    /// harness, that the outcome is unknown rather than "nothing was done".
    public static let outcomeUnknown = ProtocolError(
        .unavailable, "no answer in time; the request may or may not have been carried out, try again")
}

extension DecodingError {
    /// A decoded value that breaks its type's rule (`CheckedText`, `Nickname`),
    /// carrying the rule's own error, so a command handler answers with it
    /// (`CommandHandlers`) rather than dropping the command as undecodable.
    public static func ruleBroken(_ error: ProtocolError, in container: any SingleValueDecodingContainer)
        -> DecodingError
    {
        .dataCorrupted(.init(codingPath: container.codingPath, debugDescription: error.text, underlyingError: error))
    }

    /// The rule's error, when a broken rule is why decoding failed (`ruleBroken`).
    public var brokenRule: ProtocolError? {
        guard case .dataCorrupted(let context) = self else { return nil }
        return context.underlyingError as? ProtocolError
    }
}
