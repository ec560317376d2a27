/// An expiry job as operators see it: progress while it runs, its report after.
public struct ExpiryJobReport: Codable, Sendable, Equatable {
    public var id: Int64
    /// `schedule`, or `admin:<name>` for an on-demand run.
    public var trigger: String
    public var dryRun: Bool
    public var status: ExpiryJobStatus
    public var idleBeforeMs: Int64
    public var startedAtMs: Int64
    public var finishedAtMs: Int64?
    /// Rooms the run selected as idle; examined, removed and failed count its progress.
    public var selected: Int
    public var examined: Int
    public var removed: Int
    public var failed: Int
    /// A dry run: the rooms that would go (the first ones, bounded).
    public var rooms: [RoomID]?
    public var error: String?

    public init(
        id: Int64, trigger: String, dryRun: Bool, status: ExpiryJobStatus, idleBeforeMs: Int64, startedAtMs: Int64,
        finishedAtMs: Int64? = nil, selected: Int = 0, examined: Int = 0, removed: Int = 0, failed: Int = 0,
        rooms: [RoomID]? = nil, error: String? = nil
    ) {
        self.id = id
        self.trigger = trigger
        self.dryRun = dryRun
        self.status = status
        self.idleBeforeMs = idleBeforeMs
        self.startedAtMs = startedAtMs
        self.finishedAtMs = finishedAtMs
        self.selected = selected
        self.examined = examined
        self.removed = removed
        self.failed = failed
        self.rooms = rooms
        self.error = error
    }
}

/// Where an expiry job stands: one runs at a time; it ends finished or failed.
public enum ExpiryJobStatus: String, Codable, Sendable, CaseIterable {
    case running, finished, failed
}
