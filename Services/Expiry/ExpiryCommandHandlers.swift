import Foundation
import GeoChatBus
import GeoChatDomain
import Logging

/// Runs expiry commands (from the admin API): start a job, read one, list them.
/// Starting only records the job; this instance's runner (ExpiryRunner) is
/// woken to pick it up.
struct ExpiryCommandHandlers: Sendable {
    let jobs: ExpiryJobStore
    let settings: ExpirySettings
    let logger: Logger
    var jobRequested: Doorbell? = nil

    static let maxJobsListed = 100

    var handlers: CommandHandlers {
        var handlers = CommandHandlers(topic: Topics.expiryCommands)
        handlers.on(StartExpiryRun.self) { try await startRun($0, $1) }
        handlers.on(ReadExpiryJob.self) { command, _ in
            guard let report = try await jobs.report(command.id) else {
                throw ProtocolError(.noSuchChat, "no such expiry job")
            }
            return report
        }
        handlers.on(ListExpiryJobs.self) { command, _ in
            try await jobs.reports(limit: min(max(command.limit, 1), Self.maxJobsListed))
        }
        return handlers
    }

    func startRun(_ command: StartExpiryRun, _ context: CommandContext) async throws -> ExpiryJobReport {
        let who = command.requestedBy.trimmingCharacters(in: .whitespaces)
        guard (1...64).contains(who.count),
            !who.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw ProtocolError.bad("requestedBy", "must be 1 to 64 printable characters") }
        let limit = command.idleLimitSeconds ?? Int(settings.idleLimit.components.seconds)
        guard ExpirySettings.idleLimitRange.contains(limit) else {
            throw ProtocolError.bad(
                "idleLimitSeconds",
                "must lie between \(ExpirySettings.idleLimitRange.lowerBound) and \(ExpirySettings.idleLimitRange.upperBound)"
            )
        }
        let (report, created) = try await jobs.start(
            trigger: "admin:" + who, dryRun: command.dryRun, idleBefore: Date().addingTimeInterval(-Double(limit)),
            requestKey: context.idempotencyKey)
        if created { jobRequested?.ring() }
        logger.info(
            created ? "expiry job requested" : "expiry job requested; answered the running one",
            metadata: [
                "job": "\(report.id)", "by": "\(who)", "dry_run": "\(command.dryRun)", "idle_limit_s": "\(limit)",
            ])
        return report
    }
}
