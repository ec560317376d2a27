import GeoChatDomain

/// Escapes text and attribute values for XML 1.0. Input is already XML-safe
/// (rejected on entry otherwise), so only the five special characters change,
/// and the carriage return: a parser turns a literal CR (or CR LF) into LF, so
/// only `&#13;` gives the reader the text that was sent.
public enum XMLEscaping {
    public static func escape(_ text: String) -> String {
        var utf8 = text
        // Fast path: most chat text has nothing to escape.
        let escaped: [UInt8]? = utf8.withUTF8 { bytes in
            guard bytes.contains(where: { replacement(for: $0) != nil }) else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + 16)
            append(bytes, to: &out)
            return out
        }
        return escaped.map { String(decoding: $0, as: UTF8.self) } ?? text
    }

    /// `escape`'s bytes for the UTF-8 bytes of a text, appended to `out`.
    public static func append(_ text: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var plain = text.startIndex
        for at in text.indices {
            guard let replacement = replacement(for: text[at]) else { continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: text[plain..<at]))
            replacement.withUTF8Buffer { out.append(contentsOf: $0) }
            plain = at + 1
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: text[plain...]))
    }

    /// Every special character is ASCII, and no byte of a longer UTF-8
    /// sequence is: a text's bytes are escaped one by one.
    private static func replacement(for byte: UInt8) -> StaticString? {
        switch byte {
        case UInt8(ascii: "&"): "&amp;"
        case UInt8(ascii: "<"): "&lt;"
        case UInt8(ascii: ">"): "&gt;"
        case UInt8(ascii: "\""): "&quot;"
        case UInt8(ascii: "'"): "&apos;"
        case UInt8(ascii: "\r"): "&#13;"
        default: nil
        }
    }
}
