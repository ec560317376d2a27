/// Plain values that travel between services.

public struct SessionInfo: Codable, Sendable, Equatable {
    public var id: SessionID
    public var nick: String
    /// Grows with every change, so a reader can drop stale news.
    public var version: Int64
    public var ended: Bool

    public init(id: SessionID, nick: String, version: Int64, ended: Bool = false) {
        self.id = id
        self.nick = nick
        self.version = version
        self.ended = ended
    }
}

public struct RoomInfo: Codable, Sendable, Equatable {
    public var id: RoomID
    public var position: MercatorPoint
    public var zoom: ZoomLevel
    public var topic: String

    public init(id: RoomID, position: MercatorPoint, zoom: ZoomLevel, topic: String) {
        self.id = id
        self.position = position
        self.zoom = zoom
        self.topic = topic
    }
}

public struct ChatMessage: Codable, Sendable, Equatable {
    public var room: RoomID
    public var id: MessageID
    public var nick: String
    public var text: String
    /// Milliseconds since 1970, UTC.
    public var addedAt: Int64

    public init(room: RoomID, id: MessageID, nick: String, text: String, addedAt: Int64) {
        self.room = room
        self.id = id
        self.nick = nick
        self.text = text
        self.addedAt = addedAt
    }
}

/// A participant as the rooms service knows it; presence is judged by gateways.
public struct Member: Codable, Sendable, Equatable {
    public var session: SessionID
    public var nick: String
    /// The session version `nick` belongs to (0: from a message, version unknown).
    public var nickVersion: Int64?
    /// The member's last join or say: a sign of life the owner saw, in ms.
    public var activeAtMs: Int64?

    public init(session: SessionID, nick: String, nickVersion: Int64? = nil, activeAtMs: Int64? = nil) {
        self.session = session
        self.nick = nick
        self.nickVersion = nickVersion
        self.activeAtMs = activeAtMs
    }
}

/// A room query: a box (edges included) and an inclusive zoom range.
public struct RegionQuery: Codable, Sendable, Equatable {
    public var box: MercatorBox
    public var zooms: ClosedRange<Int>
    public var cap: Int

    public init(box: MercatorBox, zooms: ClosedRange<Int>, cap: Int) {
        self.box = box
        self.zooms = zooms
        self.cap = cap
    }
}

/// Where an expiry job stands: one runs at a time; it ends finished or failed.
public enum ExpiryJobStatus: String, Codable, Sendable, CaseIterable {
    case running, finished, failed
}

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

/// A room with its last visit, as a gateway's room index holds it.
public struct IndexedRoom: Codable, Sendable, Equatable {
    public var room: RoomInfo
    /// Milliseconds since 1970, UTC.
    public var visitedAtMs: Int64

    public init(room: RoomInfo, visitedAtMs: Int64) {
        self.room = room
        self.visitedAtMs = visitedAtMs
    }
}
