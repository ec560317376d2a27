import GeoChatDomain

/// Escapes text and attribute values for XML 1.0. Input is already XML-safe
/// (rejected on entry otherwise), so only the five special characters change,
/// and the carriage return: a parser turns a literal CR (or CR LF) into LF, so
/// only `&#13;` gives the reader the text that was sent.
public enum XMLEscaping {
    public static func escape(_ text: String) -> String {
        // Fast path: most chat text has nothing to escape.
        let special: (UInt8) -> Bool = {
            $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 || $0 == 0x0D
        }
        let needed =
            text.utf8.withContiguousStorageIfAvailable { $0.contains(where: special) }
            ?? text.utf8.contains(where: special)
        guard needed else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\r": out += "&#13;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
