import Foundation
import GeoChatBus
import GeoChatDomain

/// The rooms service's state: rooms by place and zoom, memberships, visits,
/// removals. `PostgresRoomStore` keeps it. Every change other services or
/// gateways follow is answered with its event, staged in the store's outbox in
/// the same transaction (none for a repeat, which changes nothing).
///
/// What only one feature uses is declared with both versions of it in its own
/// file: `RoomAdministration` (operators' changes), `RoomExpiry` (idle rooms).
protocol RoomStore: RoomAdministration, RoomExpiry {
    /// Where the changes' events wait for the broker.
    var outbox: any Outbox<StagedEvent> { get }
    /// Creates rooms, answering each in order; the same creator asking for the
    /// same room again within `Limits.createRetryWindowSeconds` (in the same
    /// call too) gets the first one back (no event).
    func create(_ rooms: [NewRoom]) async throws -> [Announced<RoomInfo>]
    /// Rooms in the box and zoom range, most recently visited first, at most `query.cap`.
    func region(_ query: RegionQuery) async throws -> [RoomInfo]
    func find(_ id: RoomID) async throws -> RoomInfo?
    /// Every room with an id above `after` and below `before` (nil: no bound),
    /// ascending, at most `limit`, with its last visit (gateways' index load);
    /// with `changes`, only the rooms in that window (a gateway's catch-up after its snapshot).
    func page(after: RoomID, before: RoomID?, changes: RoomChangeWindow?, limit: Int) async throws -> [IndexedRoom]
    /// Ids of the rooms removed at or after `since`, above `after`, ascending, at most `limit`.
    func removedRooms(since: Date, after: RoomID, limit: Int) async throws -> [RoomID]
    /// The rooms stored: how many, and their ids' checksum.
    func tally() async throws -> RoomTally
    /// The highest room id stored, 0 for none.
    func highestID() async throws -> RoomID
    func lobby() async throws -> RoomInfo?
    /// Joins and counts a visit and a sign of life; false when there is no such
    /// room. A known member takes `nick` only when `nickVersion` is at least the
    /// version of the nick it has (nil: a message's nick, never newer than what is held).
    /// `announce`: stage the `joined` event (a join command does; a say's
    /// implied join goes through `sayersJoined`).
    func join(_ room: RoomID, session: SessionID, nick: String, nickVersion: Int64?, announce: Bool) async throws
        -> Announced<Bool>
    /// Says joined their authors (docs/protocol.md: saying in a room joins it),
    /// many in one statement: each author (nil: an anonymous post, only a visit)
    /// made a member, or its membership's sign of life renewed (a message's nick
    /// never replaces the one held); each room's visit counted, written at most
    /// once per `RoomRules.visitResolution`. Staged: a `joined` event for each
    /// membership that is new, the only ones that change a participant list.
    func sayersJoined(_ sayers: [Sayer]) async throws -> [StagedEvent]
    /// False when there is no such room.
    func leave(_ room: RoomID, session: SessionID) async throws -> Announced<Bool>
    /// Nil when there is no such room.
    func members(_ room: RoomID) async throws -> [Member]?
    /// The session's memberships count a sign of life at `at` (never moved back).
    func markPresent(_ session: SessionID, at: Date) async throws
    /// The session's memberships take `nick` unless they hold a newer version's.
    func renameMember(_ session: SessionID, nick: String, version: Int64) async throws
    /// An ended session leaves every room, and is remembered a while so a late event cannot bring it back.
    func removeMemberships(of session: SessionID) async throws
}

enum RoomRules {
    /// A room's last visit is written again only once it is this old: says
    /// visit their room on every post, and expiry counts idle time in days.
    static let visitResolution: Duration = .seconds(60)
}

/// The author of a say, as the rooms service learns it (`JoinBySaying`).
struct Sayer: Hashable, Sendable {
    let room: RoomID
    /// Nil: an anonymous post (add.php), which only visits the room.
    let session: SessionID?
    let nick: String
}

/// A room asked for: by whom, where, at which zoom level, under which topic
/// (all of it what a repeat has in common).
struct NewRoom: Sendable, Hashable {
    var session: SessionID
    var position: MercatorPoint
    var zoom: ZoomLevel
    var topic: String
}

extension RoomStore {
    /// Creates one room (`create(_:)` with one).
    func create(session: SessionID, position: MercatorPoint, zoom: ZoomLevel, topic: String) async throws
        -> Announced<RoomInfo>
    {
        try await create([NewRoom(session: session, position: position, zoom: zoom, topic: topic)])[0]
    }
}
