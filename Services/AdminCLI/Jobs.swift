import ArgumentParser
import Foundation
import GeoChatAdminAPI
import GeoChatDomain

struct Jobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List expiry jobs, newest first, or show one job's report (--watch follows it).")
    @OptionGroup var connection: Connection
    @Argument(help: "A job id: show its report.") var job: Int64?
    @Flag(help: "With a job id: follow it until it ends.") var watch = false
    @Option(help: "At most this many jobs.") var limit = 20

    func run() async throws {
        let client = try connection.client()
        if let job {
            var report = try await client.get("expiry/runs/\(job)", as: AdminAPI.JobResponse.self).job
            if watch { report = try await JobWatcher(client: client).follow(report) }
            print(Report.text(report))
            return
        }
        let jobs = try await client.get("expiry/runs?limit=\(limit)", as: AdminAPI.JobsResponse.self).jobs
        Format.table(
            ["JOB", "STARTED", "TRIGGER", "KIND", "STATUS", "SELECTED", "REMOVED", "FAILED", "DURATION"],
            jobs.map {
                [
                    String($0.id), Format.time($0.startedAtMs), $0.trigger, $0.dryRun ? "dry run" : "real",
                    $0.status.rawValue,
                    String($0.selected), String($0.removed), String($0.failed), Report.duration($0),
                ]
            })
    }
}
