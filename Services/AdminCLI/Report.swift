import Foundation
import GeoChatDomain

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
