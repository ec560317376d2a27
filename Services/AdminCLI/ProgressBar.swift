import Foundation
import GeoChatDomain

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
