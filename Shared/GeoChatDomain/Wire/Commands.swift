/// Commands, one enum per owning service. Each travels inside a `RequestEnvelope`.

public enum SessionCommand: Codable, Sendable {
    case start(nick: String)
    case lookup(session: SessionID)
    case rename(session: SessionID, nick: String)
    case end(session: SessionID)
}

public enum RoomsCommand: Codable, Sendable {
    case create(session: SessionID, position: MercatorPoint, zoom: ZoomLevel, topic: String)
    case region(RegionQuery)
    case lookup(room: RoomID)
    case lobby
    case join(room: RoomID, session: SessionID, nick: String)
    case leave(room: RoomID, session: SessionID)
    case members(room: RoomID)
    /// Rooms whose last visit is before `idleBeforeMs`, oldest first (never the lobby).
    case idleRooms(idleBeforeMs: Int64, limit: Int)
    /// Removes the room if it is still idle since `idleBeforeMs` (checked again in the same transaction).
    case removeIdle(room: RoomID, idleBeforeMs: Int64)
    /// Expiry's selection, page by page: ids above `after` whose last visit is
    /// before `idleBeforeMs`, ascending (never the lobby). Answered with `roomIDs`.
    case idleRoomsAfter(after: RoomID, idleBeforeMs: Int64, limit: Int)
    /// Expiry's batch removal: removes those of `rooms` still idle since
    /// `idleBeforeMs` (checked again in the same transaction) with their
    /// memberships, tombstoned under `reason`. Answered with `roomIDs`: every one
    /// of `rooms` removed under `reason`, now or by an earlier attempt, so a
    /// retry after a lost reply learns the whole outcome.
    case removeIdleRooms(rooms: [RoomID], idleBeforeMs: Int64, reason: String)
    /// Administration: list and search rooms, remove one now (Wire/AdminCommands.swift).
    case admin(RoomsAdminCommand)
}

public enum MessagingCommand: Codable, Sendable {
    /// `session` is nil for the add/messages dialect, which has no sessions.
    case say(room: RoomID, session: SessionID?, nick: String, text: String)
    /// Messages with id > `after` (oldest first), or the latest `limit` when `after` is nil.
    case history(room: RoomID, after: MessageID?, limit: Int)
    /// Deletes the messages of rooms the rooms service removed and tombstones
    /// their logs (idempotent). Sent by expiry after `removeIdleRooms`.
    case removeRooms(rooms: [RoomID])
    /// Administration: how many messages each room holds. Answered `.admin(.messageCounts)`.
    case messageCounts(rooms: [RoomID])
}

/// Commands to the expiry service (its jobs: scheduled and on-demand room expiry).
public enum ExpiryCommand: Codable, Sendable {
    /// Starts a run now, or answers the run already under way (one at a time,
    /// cluster-wide). `idleLimitSeconds` nil means the configured idle limit.
    case startRun(dryRun: Bool, idleLimitSeconds: Int?, requestedBy: String)
    /// One job's progress or report.
    case job(id: Int64)
    /// The latest jobs, newest first.
    case jobs(limit: Int)
}

/// What a service answers; the requester expects the case that fits its command.
public enum ReplyBody: Codable, Sendable {
    case done
    case session(SessionInfo)
    case room(RoomInfo)
    case rooms([RoomInfo])
    case members([Member])
    case posted(ChatMessage)
    case history(MessageHistory)
    case roomIDs([RoomID])
    case removed(Bool)
    case expiryJob(ExpiryJobReport)
    case expiryJobs([ExpiryJobReport])
    case admin(AdminReply)
}

/// An expiry job as operators see it: progress while it runs, its report after.
public struct ExpiryJobReport: Codable, Sendable, Equatable {
    public var id: Int64
    /// `schedule`, or `admin:<name>` for an on-demand run.
    public var trigger: String
    public var dryRun: Bool
    /// `running`, `finished` or `failed`.
    public var status: String
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
        id: Int64, trigger: String, dryRun: Bool, status: String, idleBeforeMs: Int64, startedAtMs: Int64,
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

public struct MessageHistory: Codable, Sendable, Equatable {
    public var room: RoomID
    /// The room's highest stored id when the history was read (0 for none yet).
    public var head: MessageID
    public var messages: [ChatMessage]

    public init(room: RoomID, head: MessageID, messages: [ChatMessage]) {
        self.room = room
        self.head = head
        self.messages = messages
    }
}
