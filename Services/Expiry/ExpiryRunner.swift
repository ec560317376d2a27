import Foundation
import GeoChatBus
import GeoChatDomain
import Logging

/// Every expiry instance runs this loop; the one holding the cluster-wide lock
/// works. It finishes the running job (started on demand, or left half-done by
/// an instance that died), and starts a scheduled job when one is due.
struct ExpiryRunner: Sendable {
    let jobs: ExpiryJobStore
    let run: ExpiryRun
    let settings: ExpirySettings
    let logger: Logger
    /// Rung by this instance's handlers when an admin starts a job.
    let jobRequested: Doorbell
    /// How often an idle instance looks for work: a scheduled job's time, or a
    /// job left half-done by an instance that died (one requested through this
    /// instance starts at once).
    let tick: Duration = .seconds(5)

    func loop(isReady: @escaping @Sendable () -> Bool) async {
        while !Task.isCancelled {
            if isReady() {
                do {
                    _ = try await jobs.exclusively { try await drain() }
                } catch {
                    // Only a shutdown ends the loop: a dependency that throws
                    // CancellationError while it goes away (a pool losing its
                    // PostgreSQL) is one more interruption to retry.
                    if Task.isCancelled { return }
                    logger.warning(
                        "expiry work interrupted; retrying", metadata: ["error": "\(String(reflecting: error))"])
                }
            }
            await jobRequested.wait(upTo: tick)
        }
    }

    /// Holding the lock: run jobs until nothing is running and none is due.
    private func drain() async throws {
        while !Task.isCancelled {
            if let job = try await jobs.running() {
                try await run.execute(job)
                continue
            }
            guard try await jobs.scheduleDue(interval: settings.interval) else { return }
            let idleBefore = Date().addingTimeInterval(-Double(settings.idleLimit.components.seconds))
            let (report, created) = try await jobs.start(
                trigger: "schedule", dryRun: false, idleBefore: idleBefore, requestKey: nil)
            if created { logger.debug("scheduled expiry job started", metadata: ["job": "\(report.id)"]) }
        }
    }
}
