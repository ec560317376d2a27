/// Text from outside shown where control characters act instead of showing:
/// log lines, terminals, audit tables. One rule for all of them: C0 and C1
/// controls, DEL, and the Unicode line separators and bidirectional overrides
/// (which reorder what a reader sees) are written as escapes, so an attacker's
/// name or topic can neither start a new log line nor run an ESC sequence in
/// an operator's terminal.
public enum ControlCharacters {
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    public static func contains(in text: String) -> Bool { text.unicodeScalars.contains(where: isUnsafe) }

    /// `\n`, `\r`, `\t`, `\\`-free otherwise: every other unsafe character as
    /// `\u{XX}` (its hexadecimal value). Safe text comes back unchanged.
    public static func escaped(_ text: String) -> String {
        guard contains(in: text) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else {
                out.append(scalar)
                continue
            }
            let escape: String =
                switch scalar {
                case "\n": "\\n"
                case "\r": "\\r"
                case "\t": "\\t"
                default: "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                }
            out.append(contentsOf: escape.unicodeScalars)
        }
        return String(out)
    }
}
