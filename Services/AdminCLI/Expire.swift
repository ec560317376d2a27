import ArgumentParser
import Foundation
import GeoChatAdminAPI
import GeoChatDomain

struct Expire: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start an expiry run now, watch its progress, and print its report.",
        discussion:
            "A dry run lists the rooms that would go and changes nothing. One run at a time cluster-wide: starting while one runs shows that one."
    )

    @OptionGroup var connection: Connection
    @Option(
        help:
            "Rooms not visited for this long go: 30d, 12h, 90m, or seconds (default: the cluster's room.idle.limit.s).")
    var idle: String?
    @Flag(help: "List what would go; remove nothing.") var dryRun = false
    @Flag(help: "Start the run and return without waiting for its report.") var noWait = false

    func run() async throws {
        var idleSeconds: Int?
        if let idle {
            guard let seconds = DurationText.seconds(idle) else {
                throw ValidationError("--idle: '\(idle)' is not a duration like 30d")
            }
            idleSeconds = seconds
        }
        let client = try connection.client()
        let started = try await start(client, AdminAPI.ExpiryRunRequest(dryRun: dryRun, idleSeconds: idleSeconds))
        print(
            "expiry job \(started.id) started (\(started.dryRun ? "dry run" : "real run"), trigger \(started.trigger))")
        if noWait { return }
        let finished = try await JobWatcher(client: client).follow(started)
        print(Report.text(finished))
        if finished.status == .failed { throw ExitCode(1) }
    }

    /// Starts the run; while another is under way (one at a time cluster-wide), waits for it first.
    private func start(_ client: AdminClient, _ request: AdminAPI.ExpiryRunRequest) async throws -> ExpiryJobReport {
        for _ in 0..<10 {
            let (data, status) = try await client.exchange("POST", "expiry/runs", body: request)
            guard status == 409, let other = try? JSONDecoder().decode(AdminAPI.RunUnderWayResponse.self, from: data)
            else {
                return try client.decode(data, status: status, as: AdminAPI.JobResponse.self).job
            }
            FileHandle.standardError.write(
                Data("expiry job \(other.job.id) (\(other.job.trigger)) is under way; waiting for it\n".utf8))
            _ = try await JobWatcher(client: client).follow(other.job)
        }
        throw CLIError("other expiry runs kept starting first; try again")
    }
}

/// Polls a job until it is no longer running, drawing a progress bar on a
/// terminal (a line now and then otherwise).
struct JobWatcher {
    let client: AdminClient

    func follow(_ job: ExpiryJobReport) async throws -> ExpiryJobReport {
        var job = job
        let bar = ProgressBar()
        while job.status == .running {
            bar.show(job)
            try await Task.sleep(for: .milliseconds(500))
            job = try await client.get("expiry/runs/\(job.id)", as: AdminAPI.JobResponse.self).job
        }
        bar.finish(job)
        return job
    }
}
