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

/// `[#########-----------]  45%  450/1000 rooms  removed 448  failed 2` on a
/// terminal (redrawn in place on standard error); plain lines every few
/// seconds when standard error is not a terminal.
final class ProgressBar {
    let interactive = isatty(2) == 1
    private var lastLine = Date.distantPast
    static let width = 30

    func show(_ job: ExpiryJobReport) {
        let text = Self.line(job)
        if interactive {
            FileHandle.standardError.write(Data(("\r\u{1B}[2K" + text).utf8))
        } else if Date().timeIntervalSince(lastLine) >= 2 {
            FileHandle.standardError.write(Data((text + "\n").utf8))
            lastLine = Date()
        }
    }

    func finish(_ job: ExpiryJobReport) {
        if interactive { FileHandle.standardError.write(Data(("\r\u{1B}[2K" + Self.line(job) + "\n").utf8)) }
    }

    static func line(_ job: ExpiryJobReport) -> String {
        guard job.selected > 0 else { return job.status == .running ? "selecting idle rooms…" : "no idle rooms" }
        let done = min(job.examined, job.selected)
        let filled = width * done / job.selected
        let percent = 100 * done / job.selected
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        return
            "[\(bar)] \(String(percent).leftPadded(3))%  \(done)/\(job.selected) rooms  removed \(job.removed)  failed \(job.failed)"
    }
}

/// The report of a finished (or running) job.
enum Report {
    static func text(_ job: ExpiryJobReport) -> String {
        var lines = [
            "expiry job \(job.id): \(job.status.rawValue)\(job.dryRun ? " (dry run: nothing was removed)" : "")",
            "  trigger      \(job.trigger)",
            "  idle before  \(Format.time(job.idleBeforeMs))",
            "  started      \(Format.time(job.startedAtMs))",
            "  duration     \(duration(job))",
            "  selected     \(job.selected) rooms",
            "  examined     \(job.examined)",
            "  removed      \(job.removed)",
            "  failed       \(job.failed)",
        ]
        if let rooms = job.rooms {
            let shown = rooms.prefix(50).map(String.init).joined(separator: ", ")
            lines.append(
                "  \(job.dryRun ? "would remove" : "rooms")  \(shown)\(rooms.count > 50 ? ", … (\(rooms.count) listed)" : "")"
            )
        }
        if let error = job.error { lines.append("  error        \(error)") }
        return lines.joined(separator: "\n")
    }

    static func duration(_ job: ExpiryJobReport) -> String {
        let end = job.finishedAtMs ?? WallClock.nowMs()
        let seconds = Double(end - job.startedAtMs) / 1000
        return String(format: "%.1f s", seconds) + (job.finishedAtMs == nil ? " so far" : "")
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
