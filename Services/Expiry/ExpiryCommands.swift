import Foundation
import GeoChatDomain
import GeoChatRuntime
import Logging

/// Runs expiry commands (from the admin API): start a job, read one, list them.
/// Starting only records the job; a runner (ExpiryRunner) picks it up within a second.
struct ExpiryCommands: Sendable {
    let jobs: ExpiryJobs
    let settings: ExpirySettings
    let logger: Logger

    static let maxJobsListed = 100

    func handle(_ envelope: RequestEnvelope<ExpiryCommand>) async -> Result<ReplyBody, ProtocolError> {
        await answer(envelope, logger: logger) {
            switch envelope.command {
            case .startRun(let dryRun, let idleLimitSeconds, let requestedBy):
                let who = requestedBy.trimmingCharacters(in: .whitespaces)
                guard (1...64).contains(who.count), !who.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
                else { throw ProtocolError.bad("requestedBy", "must be 1 to 64 printable characters") }
                let limit = idleLimitSeconds ?? Int(settings.idleLimit.components.seconds)
                guard ExpirySettings.idleLimitRange.contains(limit) else {
                    throw ProtocolError.bad(
                        "idleLimitSeconds",
                        "must lie between \(ExpirySettings.idleLimitRange.lowerBound) and \(ExpirySettings.idleLimitRange.upperBound)")
                }
                let (report, created) = try await jobs.start(
                    trigger: "admin:" + who, dryRun: dryRun, idleBefore: Date().addingTimeInterval(-Double(limit)),
                    requestKey: envelope.idempotencyKey)
                logger.info(
                    created ? "expiry job requested" : "expiry job requested; answered the running one",
                    metadata: ["job": "\(report.id)", "by": "\(who)", "dry_run": "\(dryRun)", "idle_limit_s": "\(limit)"])
                return .expiryJob(report)

            case .job(let id):
                guard let report = try await jobs.report(id) else { throw ProtocolError(.noSuchChat, "no such expiry job") }
                return .expiryJob(report)

            case .jobs(let limit):
                return .expiryJobs(try await jobs.reports(limit: min(max(limit, 1), Self.maxJobsListed)))
            }
        }
    }
}
