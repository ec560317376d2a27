/// Rules for free text (topics, messages, lobby names): trimmed of surrounding
/// whitespace, counted in code points, and only characters XML 1.0 allows.
public enum ChatText {
    public enum Problem: Error, Equatable, Sendable {
        case empty
        case tooLong
        case notXMLSafe
    }

    /// Trims and checks a value against a length range; returns the stored form.
    /// (The phones' parameters are checked for XML safety as they are read; a
    /// JSON client's text is checked here, so no protocol stores what the other cannot show.)
    public static func validate(_ raw: String, length: ClosedRange<Int>) -> Result<String, Problem> {
        guard isXMLSafe(raw) else { return .failure(.notXMLSafe) }
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
        text.unicodeScalars.allSatisfy(isXMLChar)
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
        }
    }
}
