/// A room's messages as text, one home for the format the API's `text/plain`
/// transcript and `geochat-admin rooms export` share:
/// `2026-11-24T12:00:00Z <nick> text`, one line a message. A line break inside
/// a message continues on the next line, indented by two spaces; every other
/// control character is escaped (`ControlCharacters`), so a transcript shown
/// in a terminal cannot act on it.
public enum Transcript {
    public static func line(_ message: ChatMessage) -> String {
        let lines = message.text.unicodeScalars
            .split(omittingEmptySubsequences: false) { $0 == "\n" }
            .map { line in ControlCharacters.escaped(String(String.UnicodeScalarView(line.filter { $0 != "\r" }))) }
        let time = UTCTimestamp.rfc3339(millisecondsSince1970: message.addedAt)
        return "\(time) <\(ControlCharacters.escaped(message.nick))> \(lines.joined(separator: "\n  "))\n"
    }
}
