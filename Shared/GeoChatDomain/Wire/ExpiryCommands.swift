/// The expiry service's commands (topic `geochat.expiry.commands`, key `expiry`).

/// Starts a run now, or answers the run already under way (one at a time,
/// cluster-wide). `idleLimitSeconds` nil means the configured idle limit.
public struct StartExpiryRun: ExpiryWireCommand {
    public typealias Reply = ExpiryJobReport
    public static let name = "startRun"
    public var dryRun: Bool
    public var idleLimitSeconds: Int?
    public var requestedBy: String

    public init(dryRun: Bool, idleLimitSeconds: Int?, requestedBy: String) {
        self.dryRun = dryRun
        self.idleLimitSeconds = idleLimitSeconds
        self.requestedBy = requestedBy
    }
}

/// One job's progress or report.
public struct ReadExpiryJob: ExpiryWireCommand {
    public typealias Reply = ExpiryJobReport
    public static let name = "job"
    public var id: Int64

    public init(id: Int64) { self.id = id }
}

/// The latest jobs, newest first.
public struct ListExpiryJobs: ExpiryWireCommand {
    public typealias Reply = [ExpiryJobReport]
    public static let name = "jobs"
    public var limit: Int

    public init(limit: Int) { self.limit = limit }
}

extension WireCommands {
    /// The commands of the expiry service: a new one is listed here (`WireCommands.all`).
    public static let expiryCommands: [any WireCommand.Type] = [
        StartExpiryRun.self, ReadExpiryJob.self, ListExpiryJobs.self,
    ]
}
