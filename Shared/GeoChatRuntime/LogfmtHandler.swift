import Foundation
import GeoChatDomain
import Logging

/// One line per event, `key=value` pairs (logfmt): readable by people, parseable
/// by tools. Callers put room ids, session prefixes and errors into metadata;
/// session ids are never logged in full (see `SessionID.description`).
public struct LogfmtHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    let label: String

    public init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line =
            "ts=\(Self.timestamp()) level=\(event.level) service=\(label) msg=\(Self.quote(event.message.description))"
        var all = metadata.merging(event.metadata ?? [:]) { $1 }
        if let error = event.error { all["error"] = "\(error)" }
        for key in all.keys.sorted() {
            line += " \(ControlCharacters.escaped(key))=\(Self.quote(all[key]!.description))"
        }
        line += "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// A value as logfmt writes it: bare when it can be, else quoted, with `\`
    /// and `"` escaped and every control character written as an escape
    /// (`ControlCharacters`): one event is always one line, and no value can
    /// pass itself off as further keys or act on the terminal that shows it.
    static func quote(_ value: String) -> String {
        if !value.isEmpty, !value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" }),
            !ControlCharacters.contains(in: value)
        {
            return value
        }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"" + ControlCharacters.escaped(escaped) + "\""
    }

    static func timestamp() -> String {
        let now = Date()
        return now.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
    }
}
