import Foundation
import GeoChatBus
import GeoChatDomain
import Synchronization

/// Rooms in memory, by the same rules as `PostgresRoomStore` (the store tests
/// run both): for handler tests. Starts with the lobby, as the migrations do.
final class InMemoryRoomStore: RoomStore {
    private struct Room {
        var info: RoomInfo
        var creator: SessionID?
        var createdAtMs: Int64
        var lastVisitedMs: Int64
        var changedAtMs: Int64?
        var isLobby: Bool
        var members: [SessionID: Member] = [:]
    }

    private struct State {
        var rooms: [RoomID: Room] = [:]
        var nextID: RoomID = 1
        /// Removed rooms and why (ids are never reused).
        var removed: [RoomID: String] = [:]
        /// When each was removed.
        var removedAtMs: [RoomID: Int64] = [:]
        var endedSessions: Set<SessionID> = []
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Int64
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
    private func stage(_ event: RoomEvent) throws -> StagedEvent { events.stage(try EncodedEvent(event)) }

    func create(session: SessionID, position: MercatorPoint, zoom: ZoomLevel, topic: String) async throws
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

    func idleRooms(after: RoomID, before: Date, limit: Int) async throws -> [RoomID] {
        let cutoff = WallClock.milliseconds(before)
        return state.withLock { state in
            Array(
                state.rooms.values.filter { $0.info.id > after && !$0.isLobby && $0.lastVisitedMs < cutoff }
                    .map(\.info.id).sorted().prefix(limit))
        }
    }

    func removeIdleRooms(_ rooms: [RoomID], before: Date, reason: String) async throws
        -> Announced<(all: [RoomID], new: [RoomID])>
    {
        let cutoff = WallClock.milliseconds(before)
        return try state.withLock { state in
            var all: [RoomID] = []
            var new: [RoomID] = []
            for id in rooms {
                if let room = state.rooms[id], !room.isLobby, room.lastVisitedMs < cutoff {
                    state.rooms[id] = nil
                    state.removed[id] = state.removed[id] ?? reason
                    state.removedAtMs[id] = state.removedAtMs[id] ?? now()
                    all.append(id)
                    new.append(id)
                } else if state.removed[id] == reason, !all.contains(id) {
                    all.append(id)
                }
            }
            guard !new.isEmpty else { return Announced((all, new), event: nil) }
            return Announced((all, new), event: try stage(.removedRooms(rooms: new, reason: reason)))
        }
    }

    func adminList(search: String, limit: Int) async throws -> [AdminRoom] {
        state.withLock { state in
            state.rooms.values
                .filter {
                    search.isEmpty || $0.info.topic.lowercased().contains(search.lowercased())
                        || String($0.info.id) == search
                }
                .sorted { ($0.lastVisitedMs, $0.info.id) > ($1.lastVisitedMs, $1.info.id) }
                .prefix(limit)
                .map {
                    AdminRoom(
                        id: $0.info.id, topic: $0.info.topic, x: $0.info.position.x, y: $0.info.position.y,
                        z: $0.info.zoom.value, lobby: $0.isLobby, createdAtMs: $0.createdAtMs,
                        lastVisitedAtMs: $0.lastVisitedMs, members: $0.members.count)
                }
        }
    }

    func removeNow(_ room: RoomID, reason: String) async throws -> Announced<AdminRemoval> {
        try state.withLock { state in
            guard let found = state.rooms[room] else { return Announced(.noSuchRoom, event: nil) }
            if found.isLobby { return Announced(.lobby, event: nil) }
            state.rooms[room] = nil
            state.removed[room] = state.removed[room] ?? reason
            state.removedAtMs[room] = state.removedAtMs[room] ?? now()
            return Announced(.removed, event: try stage(.removed(room: room, reason: reason)))
        }
    }

    func change(_ room: RoomID, topic: String?, position: MercatorPoint?, zoom: ZoomLevel?) async throws
        -> Announced<AdminChange>
    {
        try state.withLock { state in
            guard var found = state.rooms[room] else { return Announced(.noSuchRoom, event: nil) }
            if found.isLobby { return Announced(.lobby, event: nil) }
            found.info.topic = topic ?? found.info.topic
            found.info.position = position ?? found.info.position
            found.info.zoom = zoom ?? found.info.zoom
            found.changedAtMs = now()
            state.rooms[room] = found
            return Announced(.changed(found.info), event: try stage(.changed(found.info)))
        }
    }
}
