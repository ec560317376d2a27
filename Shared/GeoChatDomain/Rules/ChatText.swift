/// Rules for free text (topics, messages, lobby names): trimmed of surrounding
/// whitespace, counted in code points, and only characters XML 1.0 allows.
public enum ChatText {
    public enum Problem: Error, Equatable, Sendable {
        case empty
        case tooLong
        case notXMLSafe
        /// A character that changes how the text around it is shown, or
        /// stands for a control: refused rather than stored (`isDisplaySafe`).
        case displayControl
    }

    /// Trims and checks a value against a length range; returns the stored form.
    /// (The phones' parameters are checked for XML safety as they are read; a
    /// JSON client's text is checked here, so no protocol stores what the other cannot show.)
    public static func validate(_ raw: String, length: ClosedRange<Int>) -> Result<String, Problem> {
        guard isXMLSafe(raw) else { return .failure(.notXMLSafe) }
        guard isDisplaySafe(raw) else { return .failure(.displayControl) }
        let trimmed = trim(raw)
        let count = trimmed.unicodeScalars.count
        if count == 0 { return .failure(.empty) }
        if count > length.upperBound { return .failure(.tooLong) }
        return .success(trimmed)
    }

    /// Removes leading and trailing whitespace and newlines (Unicode's White_Space).
    public static func trim(_ raw: String) -> String {
        let scalars = raw.unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[start...end])
    }

    /// True when every scalar may appear in an XML 1.0 document:
    /// #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
    public static func isXMLSafe(_ text: String) -> Bool {
        // In valid UTF-8 only two kinds of scalar break the rule: the C0
        // controls but tab, LF and CR (one byte each, under 0x20) and U+FFFE,
        // U+FFFF (lead byte 0xEF). A text with neither byte is safe without
        // decoding a scalar: every parameter of every request is checked here.
        let suspect = text.utf8.contains { byte in
            (byte < 0x20 && byte != 0x9 && byte != 0xA && byte != 0xD) || byte == 0xEF
        }
        return !suspect || text.unicodeScalars.allSatisfy(isXMLChar)
    }

    /// False when the text holds a character that lets it pose as other text
    /// where it is shown (the map, phones, logs): DEL and the C1 controls
    /// (U+007F–U+009F); the bidirectional embeddings, overrides and isolates
    /// (U+202A–U+202E, U+2066–U+2069), which reorder what follows them, even
    /// past the text's end; the line and paragraph separators (U+2028,
    /// U+2029); and invisible format characters with no use inside words
    /// (U+180E, U+2060–U+2064, U+206A–U+206F, U+FEFF). Refused, not removed,
    /// so that what is stored is what was sent (the phones' round trip).
    /// Kept, because real text needs them: ZWJ and ZWNJ (U+200C, U+200D: emoji
    /// sequences, Persian and Indic scripts), the direction marks (U+200E,
    /// U+200F, U+061C), which set no state, and the zero-width space U+200B
    /// (Thai and Khmer line breaks). docs/security.md, "Text shown to others".
    public static func isDisplaySafe(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            switch scalar.value {
            case 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029,
                0x180E, 0x2060...0x2064, 0x206A...0x206F, 0xFEFF:
                false
            default: true
            }
        }
    }

    @inline(__always)
    static func isXMLChar(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x9, 0xA, 0xD: return true
        case 0x20...0xD7FF: return true
        case 0xE000...0xFFFD: return true
        case 0x10000...0x10FFFF: return true
        default: return false
        }
    }
}

extension Result where Success == String, Failure == ChatText.Problem {
    /// The protocol error for a broken text rule, naming the field.
    public func get(field: String) throws(ProtocolError) -> String {
        switch self {
        case .success(let text): return text
        case .failure(.empty): throw ProtocolError(.empty, "\(field) is empty")
        case .failure(.tooLong): throw ProtocolError(.tooLong, "\(field) is too long")
        case .failure(.notXMLSafe): throw .bad(field, "contains characters not allowed in XML")
        case .failure(.displayControl):
            throw .bad(field, "contains a control, bidirectional-override or invisible formatting character")
        }
    }
}

/// Free text checked by `ChatText`'s rules when it was made, kept in its
/// stored form (trimmed). The one way to make one is `init(checking:)`, and
/// decoding checks again, so a command carrying one (`Say.text`,
/// `CreateRoom.topic`) cannot carry a text the rule refuses, wherever it came from.
public struct CheckedText<Rule: TextRule>: Hashable, Sendable, Codable, CustomStringConvertible {
    public let value: String

    /// Checks `raw` against the rule, or a narrower length (the lobby's
    /// shorter posts); `field` names the parameter in the error.
    public init(checking raw: String, field: String = Rule.field, length: ClosedRange<Int> = Rule.length)
        throws(ProtocolError)
    {
        precondition(Rule.length.contains(length.lowerBound) && Rule.length.contains(length.upperBound))
        value = try ChatText.validate(raw, length: length).get(field: field)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        do throws(ProtocolError) {
            self = try Self(checking: raw)
        } catch {
            throw DecodingError.ruleBroken(error, in: container)
        }
        guard value == raw else {
            throw DecodingError.ruleBroken(.bad(Rule.field, "is not in its stored form (trimmed)"), in: container)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    public var description: String { value }
}

/// What a `CheckedText` is held to: its length in code points and the
/// parameter its errors name.
public protocol TextRule: Sendable {
    static var length: ClosedRange<Int> { get }
    static var field: String { get }
}

/// A message's text: 1 to 500 code points (`Limits.messageLength`).
public typealias MessageText = CheckedText<MessageTextRule>
public enum MessageTextRule: TextRule {
    public static var length: ClosedRange<Int> { Limits.messageLength }
    public static var field: String { "msg" }
}

/// A room's topic: 1 to 100 code points (`Limits.topicLength`).
public typealias RoomTopic = CheckedText<RoomTopicRule>
public enum RoomTopicRule: TextRule {
    public static var length: ClosedRange<Int> { Limits.topicLength }
    public static var field: String { "topic" }
}
