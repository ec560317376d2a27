import Foundation
import GeoChatBus
import GeoChatDomain
import Synchronization

/// Rooms in memory, by the same rules as `PostgresRoomStore` (the store tests
/// run both): for handler tests. Starts with the lobby, as the migrations do.
final class InMemoryRoomStore: RoomStore {
    // Internal, not private: the store's feature files (RoomAdministration, RoomExpiry) extend it.
    struct Room {
        var info: RoomInfo
        var creator: SessionID?
        var createdAtMs: Int64
        var lastVisitedMs: Int64
        var changedAtMs: Int64?
        var isLobby: Bool
        var members: [SessionID: Member] = [:]
    }

    struct State {
        var rooms: [RoomID: Room] = [:]
        var nextID: RoomID = 1
        /// Removed rooms and why (ids are never reused).
        var removed: [RoomID: String] = [:]
        /// When each was removed.
        var removedAtMs: [RoomID: Int64] = [:]
        var endedSessions: Set<SessionID> = []
    }

    let state = Mutex(State())
    let now: @Sendable () -> Int64
    let events: InMemoryEventOutbox
    var outbox: any Outbox<StagedEvent> { events }

    init(now: @escaping @Sendable () -> Int64 = WallClock.nowMs) {
        self.now = now
        self.events = InMemoryEventOutbox(now: now)
        let at = now()
        state.withLock { state in
            let lobby = RoomInfo(id: 1, position: MercatorPoint(x: 0.5, y: 0.5)!, zoom: ZoomLevel(0)!, topic: "Lobby")
            state.rooms[1] = Room(info: lobby, creator: nil, createdAtMs: at, lastVisitedMs: at, isLobby: true)
            state.nextID = 2
        }
    }

    /// Staged under the state's lock, as a transaction would.
    func stage(_ event: RoomEvent) throws -> StagedEvent { events.stage(try EncodedEvent(event)) }

    func create(_ rooms: [NewRoom]) async throws -> [Announced<RoomInfo>] {
        try rooms.map { try create(session: $0.session, position: $0.position, zoom: $0.zoom, topic: $0.topic) }
    }

    private func create(session: SessionID, position: MercatorPoint, zoom: ZoomLevel, topic: String) throws
        -> Announced<RoomInfo>
    {
        let now = now()
        let window = now - Int64(Limits.createRetryWindowSeconds) * 1000
        return try state.withLock { state in
            if let earlier = state.rooms.values.filter({
                $0.creator == session && $0.createdAtMs > window && $0.info.position == position && $0.info.zoom == zoom
                    && $0.info.topic == topic
            }).min(by: { $0.info.id < $1.info.id }) {
                state.rooms[earlier.info.id]!.lastVisitedMs = now
                return Announced(earlier.info, event: nil)
            }
            let info = RoomInfo(id: state.nextID, position: position, zoom: zoom, topic: topic)
            state.nextID = RoomID(state.nextID.rawValue + 1)
            state.rooms[info.id] = Room(
                info: info, creator: session, createdAtMs: now, lastVisitedMs: now, isLobby: false)
            return Announced(info, event: try stage(.created(info)))
        }
    }

    func region(_ query: RegionQuery) async throws -> [RoomInfo] {
        state.withLock { state in
            state.rooms.values
                .filter { query.zooms.contains($0.info.zoom.value) && query.box.contains($0.info.position) }
                .sorted { ($0.lastVisitedMs, $0.info.id) > ($1.lastVisitedMs, $1.info.id) }
                .prefix(query.cap)
                .map(\.info)
                .sorted { $0.id < $1.id }
        }
    }

    func find(_ id: RoomID) async throws -> RoomInfo? { state.withLock { $0.rooms[id]?.info } }

    func page(after: RoomID, before: RoomID?, changes: RoomChangeWindow?, limit: Int) async throws -> [IndexedRoom] {
        state.withLock { state in
            state.rooms.values.filter { $0.info.id > after && $0.info.id < (before ?? .max) }
                .filter { room in
                    guard let changes else { return true }
                    return room.info.id > changes.above || (room.lastVisitedMs >= changes.sinceMs && !room.isLobby)
                        || (room.changedAtMs ?? .min) >= changes.sinceMs
                }
                .sorted { $0.info.id < $1.info.id }.prefix(limit)
                .map { IndexedRoom(room: $0.info, visitedAtMs: $0.lastVisitedMs) }
        }
    }

    func removedRooms(since: Date, after: RoomID, limit: Int) async throws -> [RoomID] {
        let sinceMs = WallClock.milliseconds(since)
        return state.withLock { state in
            Array(state.removedAtMs.filter { $0.key > after && $0.value >= sinceMs }.keys.sorted().prefix(limit))
        }
    }

    func tally() async throws -> RoomTally {
        state.withLock { state in
            RoomTally(
                count: state.rooms.count,
                wrappingIDSum: state.rooms.keys.reduce(0) { $0 &+ UInt64(bitPattern: $1.rawValue) })
        }
    }

    func highestID() async throws -> RoomID { state.withLock { $0.rooms.keys.max() ?? 0 } }

    func lobby() async throws -> RoomInfo? {
        state.withLock { $0.rooms.values.filter(\.isLobby).min { $0.info.id < $1.info.id }?.info }
    }

    func join(_ room: RoomID, session: SessionID, nick: String, nickVersion: Int64?, announce: Bool) async throws
        -> Announced<Bool>
    {
        let now = now()
        return try state.withLock { state in
            guard state.rooms[room] != nil else { return Announced(false, event: nil) }
            state.rooms[room]!.lastVisitedMs = now
            guard !state.endedSessions.contains(session) else { return Announced(false, event: nil) }
            var member = state.rooms[room]!.members[session] ?? Member(session: session, nick: nick, nickVersion: 0)
            if let nickVersion, nickVersion >= member.nickVersion ?? 0 {
                member.nick = nick
                member.nickVersion = nickVersion
            }
            member.activeAtMs = now
            state.rooms[room]!.members[session] = member
            return Announced(true, event: announce ? try stage(.joined(room: room, session: session, nick: nick)) : nil)
        }
    }

    func sayersJoined(_ sayers: [Sayer]) async throws -> [StagedEvent] {
        let now = now()
        let resolution = RoomRules.visitResolution.components.seconds * 1000
        return try state.withLock { state in
            var staged: [StagedEvent] = []
            for sayer in sayers {
                guard let room = state.rooms[sayer.room] else { continue }
                if room.lastVisitedMs < now - resolution { state.rooms[sayer.room]!.lastVisitedMs = now }
                guard let session = sayer.session, !state.endedSessions.contains(session) else { continue }
                if state.rooms[sayer.room]!.members[session] == nil {
                    state.rooms[sayer.room]!.members[session] = Member(
                        session: session, nick: sayer.nick, nickVersion: 0)
                    staged.append(try stage(.joined(room: sayer.room, session: session, nick: sayer.nick)))
                }
                state.rooms[sayer.room]!.members[session]!.activeAtMs = now
            }
            return staged
        }
    }

    func leave(_ room: RoomID, session: SessionID) async throws -> Announced<Bool> {
        try state.withLock { state in
            guard state.rooms[room] != nil else { return Announced(false, event: nil) }
            state.rooms[room]!.members[session] = nil
            return Announced(true, event: try stage(.left(room: room, session: session)))
        }
    }

    func members(_ room: RoomID) async throws -> [Member]? {
        state.withLock { state in
            state.rooms[room].map { room in
                room.members.values
                    .sorted { ($0.activeAtMs ?? 0) > ($1.activeAtMs ?? 0) }
                    .prefix(Limits.maxMembersRead)
                    .sorted { a, b in
                        a.nick == b.nick
                            ? a.session.value < b.session.value : a.nick.utf8.lexicographicallyPrecedes(b.nick.utf8)
                    }
            }
        }
    }

    func markPresent(_ session: SessionID, at: Date) async throws {
        let atMs = WallClock.milliseconds(at)
        state.withLock { state in
            for id in state.rooms.keys {
                guard let member = state.rooms[id]!.members[session], (member.activeAtMs ?? 0) < atMs else { continue }
                state.rooms[id]!.members[session]!.activeAtMs = atMs
            }
        }
    }

    func renameMember(_ session: SessionID, nick: String, version: Int64) async throws {
        state.withLock { state in
            for id in state.rooms.keys {
                guard let member = state.rooms[id]!.members[session], (member.nickVersion ?? 0) < version else {
                    continue
                }
                state.rooms[id]!.members[session]!.nick = nick
                state.rooms[id]!.members[session]!.nickVersion = version
            }
        }
    }

    func removeMemberships(of session: SessionID) async throws {
        state.withLock { state in
            state.endedSessions.insert(session)
            for id in state.rooms.keys { state.rooms[id]!.members[session] = nil }
        }
    }
}
