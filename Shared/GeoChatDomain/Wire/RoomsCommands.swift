/// The rooms service's commands (topic `geochat.rooms.commands`), keyed by room
/// id; a create by what a repeat of it has in common, reads that need no order
/// by their key.

public struct CreateRoom: RoomsWireCommand {
    public typealias Reply = RoomInfo
    public static let name = "create"
    public var session: SessionID
    public var position: MercatorPoint
    public var zoom: ZoomLevel
    public var topic: RoomTopic
    /// The creator, the place and the topic as stored: what a phone's repeat has in
    /// common with the first (docs/protocol.md, "create"). A repeat runs after the
    /// first and finds it; one session's different rooms are made side by side
    /// (keyed by the session alone, 16 creates at once ran one after the other).
    public var partitionKey: String? {
        "\(session.value)/\(position.x)/\(position.y)/\(zoom.value)/\(topic.value)"
    }

    public init(session: SessionID, position: MercatorPoint, zoom: ZoomLevel, topic: RoomTopic) {
        self.session = session
        self.position = position
        self.zoom = zoom
        self.topic = topic
    }
}

/// Rooms in a box and zoom range, most recently visited first, at most `query.cap`.
public struct FindRooms: RoomsWireCommand {
    public typealias Reply = [RoomInfo]
    public static let name = "region"
    public var query: RegionQuery
    public var partitionKey: String? { nil }

    public init(_ query: RegionQuery) { self.query = query }
}

public struct LookupRoom: RoomsWireCommand {
    public typealias Reply = RoomInfo
    public static let name = "lookup"
    public var room: RoomID
    public var partitionKey: String? { String(room) }

    public init(room: RoomID) { self.room = room }
}

public struct LocateLobby: RoomsWireCommand {
    public typealias Reply = RoomInfo
    public static let name = "lobby"
    public var partitionKey: String? { "lobby" }

    public init() {}
}

/// Joins (or re-joins) and counts a visit and a sign of life. `nickVersion`:
/// the session's version the nick belongs to; a membership keeps the nick of
/// the highest version it was told (renames travel on two paths).
public struct JoinRoom: RoomsWireCommand {
    public typealias Reply = Done
    public static let name = "join"
    public var room: RoomID
    public var session: SessionID
    public var nick: String
    public var nickVersion: Int64?
    public var partitionKey: String? { String(room) }

    public init(room: RoomID, session: SessionID, nick: String, nickVersion: Int64? = nil) {
        self.room = room
        self.session = session
        self.nick = nick
        self.nickVersion = nickVersion
    }
}

/// A say joined its author (saying in a room joins it): made a member, or its
/// sign of life renewed, and the room visited. Posted one way by the messaging
/// service once the message is committed and before the say is answered
/// (`CommandBus.post`); keyed by the room, so a `members` of the room sent
/// after the say's answer, through any gateway, is handled after it
/// (read-your-writes: the rooms service runs a room's commands in order).
public struct JoinBySaying: RoomsWireCommand {
    public typealias Reply = Done
    public static let name = "joinBySaying"
    public var room: RoomID
    public var session: SessionID
    public var nick: String
    public var partitionKey: String? { String(room) }

    public init(room: RoomID, session: SessionID, nick: String) {
        self.room = room
        self.session = session
        self.nick = nick
    }
}

public struct LeaveRoom: RoomsWireCommand {
    public typealias Reply = Done
    public static let name = "leave"
    public var room: RoomID
    public var session: SessionID
    public var partitionKey: String? { String(room) }

    public init(room: RoomID, session: SessionID) {
        self.room = room
        self.session = session
    }
}

/// A room's members as the rooms service knows them; presence is judged by gateways.
public struct ListMembers: RoomsWireCommand {
    public typealias Reply = [Member]
    public static let name = "members"
    public var room: RoomID
    public var partitionKey: String? { String(room) }

    public init(room: RoomID) { self.room = room }
}

/// Expiry's selection, page by page: ids above `after` whose last visit is
/// before `idleBeforeMs`, ascending (never the lobby).
public struct SelectIdleRooms: RoomsWireCommand {
    public typealias Reply = [RoomID]
    public static let name = "idleRoomsAfter"
    public var after: RoomID
    public var idleBeforeMs: Int64
    public var limit: Int
    /// The expiry job asking: its commands run in order.
    public var job: Int64
    public var partitionKey: String? { "expiry-\(job)" }

    public init(after: RoomID, idleBeforeMs: Int64, limit: Int, job: Int64) {
        self.after = after
        self.idleBeforeMs = idleBeforeMs
        self.limit = limit
        self.job = job
    }
}

/// Expiry's batch removal: removes those of `rooms` still idle since
/// `idleBeforeMs` (checked again in the same transaction) with their
/// memberships, tombstoned under `reason`. Answered with every one of `rooms`
/// removed under `reason`, now or by an earlier attempt, so a retry after a
/// lost reply learns the whole outcome.
/// Sealed by expiry (`OperatorSeal`): refused without it.
public struct RemoveIdleRooms: RoomsWireCommand, OperatorCommand {
    public typealias Reply = [RoomID]
    public static let name = "removeIdleRooms"
    public var rooms: [RoomID]
    public var idleBeforeMs: Int64
    public var reason: String
    public var job: Int64
    public var seal: String?
    public var partitionKey: String? { "expiry-\(job)" }
    public var sealedFields: [String] {
        [rooms.map(String.init).joined(separator: ","), String(idleBeforeMs), reason, String(job)]
    }

    public init(rooms: [RoomID], idleBeforeMs: Int64, reason: String, job: Int64) {
        self.rooms = rooms
        self.idleBeforeMs = idleBeforeMs
        self.reason = reason
        self.job = job
    }
}

/// Administration: rooms whose topic contains `search` (or whose id it is), most
/// recently visited first, with their visit times and membership counts.
public struct ListRoomsForAdmin: RoomsWireCommand {
    public typealias Reply = [AdminRoom]
    public static let name = "adminList"
    public var search: String?
    public var limit: Int
    public var partitionKey: String? { nil }

    public init(search: String?, limit: Int) {
        self.search = search
        self.limit = limit
    }
}

/// Administration: removes a room now (never the lobby); memberships go with it,
/// the `removed` event makes messaging delete its messages. Sealed by the
/// admin gateway (`OperatorSeal`): refused without it.
public struct RemoveRoom: RoomsWireCommand, OperatorCommand {
    public typealias Reply = Done
    public static let name = "adminRemove"
    public var room: RoomID
    public var by: String
    public var seal: String?
    public var partitionKey: String? { String(room) }
    public var sealedFields: [String] { [String(room), by] }

    public init(room: RoomID, by: String) {
        self.room = room
        self.by = by
    }
}

/// An operator's change of a room: its topic, its place, its zoom level (each
/// nil stays as it is). Answered with the room as it is now; every gateway's
/// index follows the `changed` event. The lobby is not changed. Sealed
/// (`OperatorSeal`): refused without it.
public struct ChangeRoom: RoomsWireCommand, OperatorCommand {
    public typealias Reply = RoomInfo
    public static let name = "adminChange"
    public var room: RoomID
    public var topic: RoomTopic?
    public var position: MercatorPoint?
    public var zoom: ZoomLevel?
    public var by: String
    public var seal: String?
    public var partitionKey: String? { String(room) }
    public var sealedFields: [String] {
        [
            String(room), topic?.value ?? "", position.map { "\($0.x),\($0.y)" } ?? "",
            zoom.map { String($0.value) } ?? "", by,
        ]
    }

    public init(room: RoomID, topic: RoomTopic?, position: MercatorPoint?, zoom: ZoomLevel?, by: String) {
        self.room = room
        self.topic = topic
        self.position = position
        self.zoom = zoom
        self.by = by
    }
}

/// Gateways load their room index page by page at start: every room with an
/// id above `after` and below `before` (none: no upper bound), ascending, at
/// most `limit` (capped at `maxLimit`), with its last visit. A gateway pages
/// through several id ranges side by side (`HighestRoomID` tells how far).
/// With `changes`, only the rooms changed in that window: what a gateway that
/// started from its snapshot lacks. Reads in any order, so no key.
public struct ListRoomsPage: RoomsWireCommand {
    public typealias Reply = [IndexedRoom]
    public static let name = "roomsPage"
    /// A page stays far below the broker's message size (~130 bytes a room in JSON).
    public static let maxLimit = 4000
    public var after: RoomID
    public var before: RoomID?
    public var limit: Int
    /// Nil: every room. (A rooms service that predates it answers every room: more than asked, never less.)
    public var changes: RoomChangeWindow?
    public var partitionKey: String? { nil }

    public init(after: RoomID, before: RoomID? = nil, limit: Int, changes: RoomChangeWindow? = nil) {
        self.after = after
        self.before = before
        self.limit = limit
        self.changes = changes
    }
}

/// The rooms removed at or after `sinceMs` (by an admin or an expiry job),
/// ids above `after`, ascending, at most `limit` (capped at `maxLimit`): what
/// a gateway that started from its snapshot must drop. Ids are never reused,
/// so a removal is final. Reads in any order, so no key.
public struct ListRemovedRooms: RoomsWireCommand {
    public typealias Reply = [RoomID]
    public static let name = "removedRooms"
    public static let maxLimit = 20_000
    public var sinceMs: Int64
    public var after: RoomID
    public var limit: Int
    public var partitionKey: String? { nil }

    public init(sinceMs: Int64, after: RoomID, limit: Int) {
        self.sinceMs = sinceMs
        self.after = after
        self.limit = limit
    }
}

/// How many rooms are stored, and the checksum of their ids: a gateway that
/// started from its snapshot compares its index with it, and loads every room
/// when they differ (a restored or emptied database, rooms written by hand).
public struct TallyRooms: RoomsWireCommand {
    public typealias Reply = RoomTally
    public static let name = "tallyRooms"
    public var partitionKey: String? { nil }

    public init() {}
}

/// The highest room id stored (0 for none): the end of the id ranges a
/// gateway's index load pages through. Rooms created after it was read arrive
/// as events. Reads in any order, so no key.
public struct HighestRoomID: RoomsWireCommand {
    public typealias Reply = RoomID
    public static let name = "highestRoomID"
    public var partitionKey: String? { nil }

    public init() {}
}

/// A session's new nick in every room it is a member of, before the rename is
/// answered (read-your-writes: `participants` through any gateway shows it at
/// once). The `renamed` session event does the same later; the higher version wins.
public struct RenameMemberships: RoomsWireCommand {
    public typealias Reply = Done
    public static let name = "renameMemberships"
    public var session: SessionInfo
    public var partitionKey: String? { session.id.value }

    public init(session: SessionInfo) { self.session = session }
}

/// An ended session leaves every room before its `end` is answered; the
/// `ended` session event does the same later.
public struct EndMemberships: RoomsWireCommand {
    public typealias Reply = Done
    public static let name = "endMemberships"
    public var session: SessionID
    public var partitionKey: String? { session.value }

    public init(session: SessionID) { self.session = session }
}

/// A sign of life of a session that may be absent everywhere: the first
/// request a gateway answers for a session it has not seen within the presence
/// timeout (back after a silence, or new to this gateway). Its memberships'
/// last activity moves to `seenAtMs` before the gateway answers, so
/// `participants` through every gateway lists the session at once; later
/// signs of life travel in the gateways' presence batches, which the rooms
/// service reads (docs/architecture.md, "Sessions and presence").
public struct MarkPresent: RoomsWireCommand {
    public typealias Reply = Done
    public static let name = "markPresent"
    public var session: SessionID
    public var seenAtMs: Int64
    /// The gateway's presence timeout (a live setting the rooms service does
    /// not read): a sighting the rooms service holds within a quarter of it
    /// already keeps the session listed, and the mark writes nothing.
    public var presenceTimeoutMs: Int64
    public var partitionKey: String? { session.value }

    public init(session: SessionID, seenAtMs: Int64, presenceTimeoutMs: Int64) {
        self.session = session
        self.seenAtMs = seenAtMs
        self.presenceTimeoutMs = presenceTimeoutMs
    }
}

extension WireCommands {
    /// The commands of the rooms service: a new one is listed here (`WireCommands.all`).
    public static let roomsCommands: [any WireCommand.Type] = [
        CreateRoom.self, FindRooms.self, LookupRoom.self, ListRoomsPage.self, ListRemovedRooms.self, TallyRooms.self,
        HighestRoomID.self, LocateLobby.self, JoinRoom.self, JoinBySaying.self, LeaveRoom.self, RenameMemberships.self,
        EndMemberships.self, ListMembers.self, MarkPresent.self, SelectIdleRooms.self, RemoveIdleRooms.self,
        ListRoomsForAdmin.self, RemoveRoom.self, ChangeRoom.self,
    ]
}
