import Foundation
import GeoChatDomain
import GeoChatTestSupport
import Testing

@testable import RoomsService

/// The rules every `RoomStore` keeps, on the PostgreSQL store (test PostgreSQL)
/// and on the in-memory one the handler tests use.
@Suite struct RoomStoreTests {
    @Test func theInMemoryStoreKeepsTheRules() async throws {
        try await Self.checkRules(InMemoryRoomStore())
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func thePostgresStoreKeepsTheRules() async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresRoomStore(database: database)
            try await store.migrate()
            try await Self.checkRules(store)
        }
    }

    static func checkRules(_ store: some RoomStore) async throws {
        let alice = SessionID.random(), bob = SessionID.random()
        let lobby = try #require(try await store.lobby())
        #expect(lobby.topic == "Lobby")
        let p = MercatorPoint(x: 0.25, y: 0.75)!
        let (room, isNew) = try await store.create(session: alice, position: p, zoom: ZoomLevel(8)!, topic: "Rules")
        #expect(isNew)
        let (again, againNew) = try await store.create(session: alice, position: p, zoom: ZoomLevel(8)!, topic: "Rules")
        #expect(!againNew && again == room)
        let (other, _) = try await store.create(session: bob, position: p, zoom: ZoomLevel(8)!, topic: "Rules")
        #expect(other.id > room.id, "another creator makes another room")

        let box = MercatorBox(MercatorPoint(x: 0.2, y: 0.7)!, MercatorPoint(x: 0.3, y: 0.8)!)
        #expect(try await store.region(RegionQuery(box: box, zooms: 5...11, cap: 10)).map(\.id) == [room.id, other.id])
        #expect(try await store.region(RegionQuery(box: box, zooms: 9...11, cap: 10)).isEmpty)
        try await Task.sleep(for: .milliseconds(5))
        #expect(try await store.join(room.id, session: alice, nick: "zed", nickVersion: 1))
        #expect(try await store.region(RegionQuery(box: box, zooms: 8...8, cap: 1)).map(\.id) == [room.id], "newest visit wins the cap")
        #expect(try await store.page(after: 0, before: nil, limit: 10).map(\.room.id) == [lobby.id, room.id, other.id])
        #expect(try await store.page(after: 0, before: other.id, limit: 10).map(\.room.id) == [lobby.id, room.id])
        #expect(try await store.page(after: room.id, before: other.id, limit: 10).isEmpty, "both bounds are exclusive")
        #expect(try await store.highestID() == other.id)
        let paged = try await store.page(after: lobby.id, before: nil, limit: 1)
        #expect(paged.map(\.room) == [room])
        #expect(abs(paged[0].visitedAtMs - WallClock.nowMs()) < 60_000, "a page carries the last visit")

        let joinedAt = WallClock.nowMs()
        #expect(try await store.join(room.id, session: bob, nick: "Bob", nickVersion: 1))
        #expect(try await store.join(room.id, session: alice, nick: "Alice", nickVersion: 2), "joining again renames")
        #expect(try await store.members(room.id)?.map(\.nick) == ["Alice", "Bob"])
        #expect(try await store.members(room.id)?.map(\.nickVersion) == [2, 1])
        #expect(try await store.members(room.id)?.allSatisfy { ($0.activeAtMs ?? 0) >= joinedAt - 1000 } == true,
                "a join is a sign of life the owner records")
        #expect(try await store.join(room.id, session: alice, nick: "old", nickVersion: 1), "a late join of an older nick")
        #expect(try await store.join(room.id, session: alice, nick: "fromAMessage", nickVersion: nil))
        #expect(try await store.members(room.id)?.map(\.nick) == ["Alice", "Bob"], "keeps the newest nick")
        try await store.renameMember(bob, nick: "Bobby", version: 3)
        try await store.renameMember(bob, nick: "Bobby-late", version: 2)
        #expect(try await store.members(room.id)?.map(\.nick) == ["Alice", "Bobby"], "the higher version wins")
        #expect(try await store.leave(room.id, session: bob))
        #expect(try await store.leave(room.id, session: bob), "leaving twice is fine")
        try await store.removeMemberships(of: alice)
        #expect(try await store.members(room.id) == [])
        #expect(try await store.join(room.id, session: alice, nick: "Alice", nickVersion: 3) == false, "an ended session stays out")
        #expect(try await store.members(999_999) == nil)
        #expect(try await store.join(999_999, session: bob, nick: "Bob", nickVersion: 1) == false)

        let future = Date().addingTimeInterval(60)
        #expect(try await store.idleRooms(after: 0, before: future, limit: 10) == [room.id, other.id], "never the lobby")
        #expect(try await store.idleRooms(after: room.id, before: future, limit: 10) == [other.id])
        #expect(try await store.idleRooms(after: 0, before: Date().addingTimeInterval(-60), limit: 10).isEmpty)
        let removal = try await store.removeIdleRooms([other.id, lobby.id], before: future, reason: "job 7")
        #expect(removal.all == [other.id] && removal.new == [other.id])
        let retry = try await store.removeIdleRooms([other.id], before: future, reason: "job 7")
        #expect(retry.all == [other.id] && retry.new.isEmpty)
        #expect(try await store.removeIdleRooms([other.id], before: future, reason: "job 8").all.isEmpty)
        #expect(try await store.find(other.id) == nil)

        let listed = try await store.adminList(search: "rul", limit: 10)
        #expect(listed.map(\.id) == [room.id])
        #expect(listed.first?.members == 0)
        #expect(try await store.adminList(search: String(lobby.id), limit: 10).map(\.id) == [lobby.id])
        #expect(try await store.removeNow(lobby.id, reason: "admin") == .lobby)
        #expect(try await store.removeNow(room.id, reason: "admin") == .removed)
        #expect(try await store.removeNow(room.id, reason: "admin") == .noSuchRoom)
    }
}
