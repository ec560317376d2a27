import ArgumentParser
import Foundation
import GeoChatAdminAPI
import GeoChatDomain

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
