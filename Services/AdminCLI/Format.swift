import Foundation
import GeoChatDomain

#if canImport(Glibc)
    import Glibc
#endif

/// Tables, times and setting values as an operator reads them.
enum Format {
    /// Server data as the terminal shows it: control characters escaped, so a
    /// nick, topic or audited login name cannot act on the operator's terminal.
    static func safe(_ text: String) -> String { ControlCharacters.escaped(text) }

    /// One value as compact JSON (keys sorted), for machine-readable output.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func table(_ header: [String], _ rows: [[String]]) {
        guard !rows.isEmpty else {
            print("(none)")
            return
        }
        let all = [header] + rows.map { $0.map(safe) }
        let widths = header.indices.map { column in min(48, all.map { $0[column].count }.max() ?? 0) }
        for row in all {
            let cells = row.enumerated().map { column, cell -> String in
                let clipped = cell.count > widths[column] ? String(cell.prefix(widths[column] - 1)) + "…" : cell
                return column == row.count - 1
                    ? clipped : clipped.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            print(cells.joined(separator: "  "))
        }
    }

    static func time(_ ms: Int64) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return formatter.string(from: WallClock.date(ms))
    }

    /// How long ago, roughly: `3d`, `5h`, `12m`, `40s`.
    static func age(_ ms: Int64) -> String {
        let seconds = max(0, Int((WallClock.nowMs() - ms) / 1000))
        for (unit, factor) in [("d", 86_400), ("h", 3600), ("m", 60)] where seconds >= factor {
            return "\(seconds / factor)\(unit)"
        }
        return "\(seconds)s"
    }

    static func setting(_ value: Int, name: String) -> String {
        name.hasSuffix(".s") ? "\(value) (\(DurationText.format(value)))" : String(value)
    }

    static func query(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
