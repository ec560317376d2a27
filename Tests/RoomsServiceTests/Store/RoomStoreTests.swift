import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import Testing

@testable import RoomsService

/// The rules every `RoomStore` keeps, on the PostgreSQL store (test PostgreSQL)
/// and on the in-memory one the handler tests use.
@Suite struct RoomStoreTests {
    /// Runs a check on a migrated PostgreSQL store of a scratch database.
    static func onPostgres(_ check: @escaping @Sendable (PostgresRoomStore) async throws -> Void) async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresRoomStore(database: database)
            try await store.migrate()
            try await check(store)
        }
    }

    @Test func theInMemoryStoreKeepsTheRules() async throws {
        try await Self.checkRules(InMemoryRoomStore())
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func thePostgresStoreKeepsTheRules() async throws {
        try await Self.onPostgres(Self.checkRules)
    }

    @Test func theInMemoryStoreKeepsTheSayerRules() async throws {
        try await Self.checkSayers(InMemoryRoomStore())
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func thePostgresStoreKeepsTheSayerRules() async throws {
        try await Self.onPostgres(Self.checkSayers)
    }

    /// Says join their authors, many at once: a new membership is announced,
    /// a known one only renewed, keeping the nick it holds; an
    /// anonymous post and a room that does not exist make no member; an ended
    /// session is not brought back.
    static func checkSayers(_ store: some RoomStore) async throws {
        let alice = SessionID.random()
        let bob = SessionID.random()
        let gone = SessionID.random()
        let p = MercatorPoint(x: 0.25, y: 0.75)!
        let room = try await store.create(session: alice, position: p, zoom: ZoomLevel(8)!, topic: "Sayers").value.id
        _ = try await store.join(room, session: bob, nick: "Bob", nickVersion: 3, announce: false)
        try await store.removeMemberships(of: gone)
        let first = try await store.sayersJoined(
            [
                Sayer(room: room, session: alice, nick: "Alice"), Sayer(room: room, session: alice, nick: "Alice"),
                Sayer(room: room, session: bob, nick: "bobby"), Sayer(room: room, session: nil, nick: "anon"),
                Sayer(room: RoomID(room.rawValue + 1000), session: alice, nick: "Alice"),
                Sayer(room: room, session: gone, nick: "Gone"),
            ])
        #expect(
            first.map { $0.record.decode(RoomEvent.self) } == [.joined(room: room, session: alice, nick: "Alice")],
            "only the new membership is announced, once")
        let members = try #require(try await store.members(room))
        #expect(members.map(\.nick).sorted() == ["Alice", "Bob"], "a message's nick never replaces the one held")
        #expect(try await store.members(RoomID(room.rawValue + 1000)) == nil)
        #expect(
            try await store.sayersJoined([Sayer(room: room, session: alice, nick: "Alice")]).isEmpty,
            "a member's say announces nothing")
    }

    @Test func theInMemoryStoreCreatesManyAtOnce() async throws {
        try await Self.checkCreatesTogether(InMemoryRoomStore())
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func thePostgresStoreCreatesManyAtOnce() async throws {
        try await Self.onPostgres(Self.checkCreatesTogether)
    }

    /// Creates stored together (`RoomCreations`) answer as they would one by
    /// one, in the order asked: new rooms with their events, in that order; a
    /// repeat of an earlier create, and a room asked twice in the same call, the
    /// first room without an event.
    static func checkCreatesTogether(_ store: some RoomStore) async throws {
        let alice = SessionID.random()
        let bob = SessionID.random()
        let p = MercatorPoint(x: 0.5, y: 0.5)!
        let q = MercatorPoint(x: 0.5, y: 0.25)!
        let first = try await store.create(session: alice, position: p, zoom: ZoomLevel(7)!, topic: "Harbour")
        let asked = [
            NewRoom(session: bob, position: p, zoom: ZoomLevel(7)!, topic: "Harbour"),
            NewRoom(session: alice, position: p, zoom: ZoomLevel(7)!, topic: "Harbour"),
            NewRoom(session: alice, position: q, zoom: ZoomLevel(7)!, topic: "Harbour"),
            NewRoom(session: bob, position: p, zoom: ZoomLevel(7)!, topic: "Harbour"),
            NewRoom(session: alice, position: p, zoom: ZoomLevel(8)!, topic: "Harbour"),
        ]
        let answers = try await store.create(asked)
        #expect(answers.count == asked.count)
        #expect(answers[1].value == first.value && answers[1].event == nil, "a repeat of an earlier create")
        #expect(answers[3].value == answers[0].value && answers[3].event == nil, "the same room asked twice at once")
        let made = [answers[0], answers[2], answers[4]]
        #expect(Set(made.map(\.value.id)).count == 3 && made.allSatisfy { $0.value.id > first.value.id })
        for (answer, ask) in zip(made, [asked[0], asked[2], asked[4]]) {
            #expect(answer.value.position == ask.position && answer.value.zoom == ask.zoom)
            #expect(answer.event?.record.decode(RoomEvent.self) == .created(answer.value), "each new room its event")
        }
        let seqs = made.compactMap(\.event?.seq)
        #expect(seqs == seqs.sorted() && seqs.count == 3, "the events staged in the order asked")
        for room in made.map(\.value) { #expect(try await store.find(room.id) == room) }
        #expect(try await store.create([]).isEmpty)
    }

    static func checkRules(_ store: some RoomStore) async throws {
        let alice = SessionID.random()
        let bob = SessionID.random()
        let lobby = try #require(try await store.lobby())
        #expect(lobby.topic == "Lobby")
        let p = MercatorPoint(x: 0.25, y: 0.75)!
        let created = try await store.create(session: alice, position: p, zoom: ZoomLevel(8)!, topic: "Rules")
        let room = created.value
        #expect(created.event?.record.decode(RoomEvent.self) == .created(room), "the change stages its event")
        let again = try await store.create(session: alice, position: p, zoom: ZoomLevel(8)!, topic: "Rules")
        #expect(again.event == nil && again.value == room, "a repeat stages nothing")
        let otherCreated = try await store.create(session: bob, position: p, zoom: ZoomLevel(8)!, topic: "Rules")
        let other = otherCreated.value
        #expect(other.id > room.id, "another creator makes another room")

        let box = MercatorBox(MercatorPoint(x: 0.2, y: 0.7)!, MercatorPoint(x: 0.3, y: 0.8)!)
        #expect(try await store.region(RegionQuery(box: box, zooms: 5...11, cap: 10)).map(\.id) == [room.id, other.id])
        #expect(try await store.region(RegionQuery(box: box, zooms: 9...11, cap: 10)).isEmpty)
        try await Task.sleep(for: .milliseconds(5))
        let joined = try await store.join(room.id, session: alice, nick: "zed", nickVersion: 1, announce: true)
        #expect(joined.value)
        #expect(joined.event?.record.decode(RoomEvent.self) == .joined(room: room.id, session: alice, nick: "zed"))
        #expect(
            try await store.region(RegionQuery(box: box, zooms: 8...8, cap: 1)).map(\.id) == [room.id],
            "newest visit wins the cap")
        #expect(
            try await store.page(after: 0, before: nil, changes: nil, limit: 10).map(\.room.id) == [
                lobby.id, room.id, other.id,
            ])
        #expect(
            try await store.page(after: 0, before: other.id, changes: nil, limit: 10).map(\.room.id) == [
                lobby.id, room.id,
            ])
        #expect(
            try await store.page(after: room.id, before: other.id, changes: nil, limit: 10).isEmpty,
            "both bounds are exclusive")
        #expect(try await store.highestID() == other.id)
        let paged = try await store.page(after: lobby.id, before: nil, changes: nil, limit: 1)
        #expect(paged.map(\.room) == [room])
        #expect(abs(paged[0].visitedAtMs - WallClock.nowMs()) < 60_000, "a page carries the last visit")
        // A gateway's catch-up after its snapshot: rooms above its highest id or visited since, the lobby never by its visit.
        let recently = RoomChangeWindow(sinceMs: WallClock.nowMs() - 60_000, above: room.id)
        #expect(
            try await store.page(after: 0, before: nil, changes: recently, limit: 10).map(\.room.id) == [
                room.id, other.id,
            ])
        let aMinuteOn = WallClock.nowMs() + 60_000
        #expect(
            try await store.page(
                after: 0, before: nil, changes: RoomChangeWindow(sinceMs: aMinuteOn, above: room.id), limit: 10
            )
            .map(\.room.id) == [other.id], "created above the snapshot's highest id")
        #expect(
            try await store.page(
                after: 0, before: nil, changes: RoomChangeWindow(sinceMs: aMinuteOn, above: other.id), limit: 10
            )
            .isEmpty)
        #expect(
            try await store.tally()
                == RoomTally(count: 3, wrappingIDSum: UInt64(lobby.id.rawValue + room.id.rawValue + other.id.rawValue)))

        let joinedAt = WallClock.nowMs()
        #expect(try await store.join(room.id, session: bob, nick: "Bob", nickVersion: 1, announce: false).value)
        #expect(
            try await store.join(room.id, session: alice, nick: "Alice", nickVersion: 2, announce: false).value,
            "joining again renames")
        #expect(try await store.members(room.id)?.map(\.nick) == ["Alice", "Bob"])
        #expect(try await store.members(room.id)?.map(\.nickVersion) == [2, 1])
        #expect(
            try await store.members(room.id)?.allSatisfy { ($0.activeAtMs ?? 0) >= joinedAt - 1000 } == true,
            "a join is a sign of life the owner records")
        let later = WallClock.nowMs() + 120_000
        try await store.markPresent(alice, at: WallClock.date(later))
        try await store.markPresent(alice, at: WallClock.date(later - 60_000))
        let marked = try #require(try await store.members(room.id))
        #expect(
            marked.map { abs(($0.activeAtMs ?? 0) - later) < 1000 } == [true, false],
            "a mark moves every membership of its session forward, never back, and no other's")
        #expect(
            try await store.join(room.id, session: alice, nick: "old", nickVersion: 1, announce: false).value,
            "a late join of an older nick")
        #expect(
            try await store.join(room.id, session: alice, nick: "fromAMessage", nickVersion: nil, announce: false).value
        )
        #expect(try await store.members(room.id)?.map(\.nick) == ["Alice", "Bob"], "keeps the newest nick")
        try await store.renameMember(bob, nick: "Bobby", version: 3)
        try await store.renameMember(bob, nick: "Bobby-late", version: 2)
        #expect(try await store.members(room.id)?.map(\.nick) == ["Alice", "Bobby"], "the higher version wins")
        let left = try await store.leave(room.id, session: bob)
        #expect(left.value && left.event?.record.decode(RoomEvent.self) == .left(room: room.id, session: bob))
        let leftAgain = try await store.leave(room.id, session: bob)
        #expect(leftAgain.value && leftAgain.event != nil, "leaving twice is fine (and announced: readers ignore it)")
        #expect(try await store.leave(999_999, session: bob).value == false)
        try await store.removeMemberships(of: alice)
        #expect(try await store.members(room.id) == [])
        #expect(
            try await store.join(room.id, session: alice, nick: "Alice", nickVersion: 3, announce: false).value
                == false, "an ended session stays out")
        #expect(try await store.members(999_999) == nil)
        #expect(
            try await store.join(999_999, session: bob, nick: "Bob", nickVersion: 1, announce: false).value == false)

        let future = Date().addingTimeInterval(60)
        #expect(
            try await store.idleRooms(after: 0, before: future, limit: 10) == [room.id, other.id], "never the lobby")
        #expect(try await store.idleRooms(after: room.id, before: future, limit: 10) == [other.id])
        #expect(try await store.idleRooms(after: 0, before: Date().addingTimeInterval(-60), limit: 10).isEmpty)
        let removal = try await store.removeIdleRooms([other.id, lobby.id], before: future, reason: "job 7")
        #expect(removal.value.all == [other.id] && removal.value.new == [other.id])
        #expect(removal.event?.record.decode(RoomEvent.self) == .removedRooms(rooms: [other.id], reason: "job 7"))
        let retry = try await store.removeIdleRooms([other.id], before: future, reason: "job 7")
        #expect(retry.value.all == [other.id] && retry.value.new.isEmpty && retry.event == nil)
        #expect(try await store.removeIdleRooms([other.id], before: future, reason: "job 8").value.all.isEmpty)
        #expect(try await store.find(other.id) == nil)

        let listed = try await store.adminList(search: "rul", limit: 10)
        #expect(listed.map(\.id) == [room.id])
        #expect(listed.first?.members == 0)
        #expect(try await store.adminList(search: String(lobby.id), limit: 10).map(\.id) == [lobby.id])
        #expect(try await store.removeNow(lobby.id, reason: "admin").value == .lobby)
        let removedNow = try await store.removeNow(room.id, reason: "admin")
        #expect(removedNow.value == .removed)
        #expect(removedNow.event?.record.decode(RoomEvent.self) == .removed(room: room.id, reason: "admin"))
        #expect(try await store.removeNow(room.id, reason: "admin").value == .noSuchRoom)
        let aMinuteAgo = Date().addingTimeInterval(-60)
        #expect(try await store.removedRooms(since: aMinuteAgo, after: 0, limit: 10) == [room.id, other.id])
        #expect(try await store.removedRooms(since: aMinuteAgo, after: room.id, limit: 10) == [other.id])
        #expect(try await store.removedRooms(since: aMinuteAgo, after: 0, limit: 1) == [room.id])
        #expect(try await store.removedRooms(since: future, after: 0, limit: 10).isEmpty)
        #expect(try await store.tally() == RoomTally(count: 1, idChecksum: lobby.id.rawValue))

        // Every staged event is still in the outbox; a relay pass takes them in order.
        let staged = [
            created.event, otherCreated.event, joined.event, left.event, leftAgain.event, removal.event,
            removedNow.event,
        ].compactMap { $0 }
        #expect(staged.count == 7)
        let relayed = try await OutboxChecks.relayAll(store.outbox)
        #expect(relayed.map(\.seq) == staged.map(\.seq).sorted())
        #expect(try await OutboxChecks.relayAll(store.outbox).isEmpty, "relayed events are gone")
    }
}
