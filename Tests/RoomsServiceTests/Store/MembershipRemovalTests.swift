import Foundation
import GeoChatDomain
import GeoChatPostgres
import GeoChatTestSupport
import PostgresNIO
import Testing

@testable import RoomsService

/// No membership outlives its room (PostgreSQL): what the foreign key's cascade
/// guaranteed before migration 8, now kept by the locks of the statements that
/// make memberships and the removals' own membership delete
/// (`PostgresRoomStore.deleteMemberships(ofRemoved:)`).
@Suite(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
struct MembershipRemovalTests {
    struct RolledBack: Error {}

    /// A join whose statement saw the room before a removal and writes its
    /// membership after the removal's delete: the membership goes with the
    /// room. The join is held between the two by a membership row another
    /// transaction inserted and has not committed (its insert waits for it);
    /// without the lock on the room the removal commits first and the join's
    /// membership stays behind, for a room that no longer exists.
    @Test(arguments: ["say", "join"])
    func aMembershipMadeDuringARemovalGoesWithTheRoom(_ maker: String) async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresRoomStore(database: database)
            try await store.migrate()
            let session = SessionID.random()
            let room = try await store.create(
                session: session, position: MercatorPoint(x: 0.5, y: 0.25)!, zoom: ZoomLevel(9)!, topic: "Race"
            ).value.id
            let idleBefore = Date().addingTimeInterval(3600)

            let (inserted, insertedNow) = AsyncStream<Void>.makeStream()
            let (release, releaseNow) = AsyncStream<Void>.makeStream()
            let blocker = Task {
                try await database.client.withTransaction(logger: database.logger) { tx in
                    try await tx.query(
                        """
                        INSERT INTO rooms.memberships (room_id, session_id, nick)
                        VALUES (\(room), \(session.value), 'blocker')
                        """, logger: database.logger)
                    insertedNow.yield()
                    for await _ in release { break }
                    throw RolledBack()
                }
            }
            for await _ in inserted { break }

            let joiner = Task {
                if maker == "say" {
                    _ = try await store.sayersJoined([Sayer(room: room, session: session, nick: "Alice")])
                } else {
                    _ = try await store.join(room, session: session, nick: "Alice", nickVersion: 1, announce: false)
                }
            }
            try await waitForLockWaiters(1, database)
            let removal = Task { try await store.removeIdleRooms([room], before: idleBefore, reason: "race") }
            // With the lock the removal waits for the join; without it, it is done at once.
            let deadline = ContinuousClock.now + .seconds(5)
            while try await lockWaiters(database) < 2, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            releaseNow.yield()
            // Rolled back: the join's insert no longer conflicts and goes on.
            #expect(await blocker.result.isFailure)
            try await joiner.value
            #expect(try await removal.value.value.new == [room])

            let left = try await database.client.query(
                "SELECT count(*) FROM rooms.memberships WHERE room_id = \(room)", logger: database.logger)
            for try await count in left.decode(Int64.self) {
                #expect(count == 0, "a membership of the removed room \(room) stayed behind")
            }
            #expect(try await store.members(room) == nil)
        }
    }

    /// A removal takes the memberships the room had, however many.
    @Test func aRemovalTakesItsRoomsMemberships() async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresRoomStore(database: database)
            try await store.migrate()
            let p = MercatorPoint(x: 0.5, y: 0.25)!
            var rooms: [RoomID] = []
            for topic in ["a", "b", "c"] {
                rooms.append(
                    try await store.create(session: .random(), position: p, zoom: ZoomLevel(9)!, topic: topic).value.id)
            }
            for room in rooms {
                for _ in 0..<3 {
                    _ = try await store.join(room, session: .random(), nick: "N", nickVersion: 1, announce: false)
                }
            }
            let future = Date().addingTimeInterval(3600)
            #expect(
                try await store.removeIdleRooms(Array(rooms[0...1]), before: future, reason: "idle").value.new
                    == Array(rooms[0...1]))
            #expect(try await store.removeNow(rooms[2], reason: "admin").value == .removed)
            let left = try await database.client.query(
                "SELECT count(*) FROM rooms.memberships WHERE room_id = ANY(\(rooms))", logger: database.logger)
            for try await count in left.decode(Int64.self) { #expect(count == 0) }
        }
    }

    private func lockWaiters(_ database: Database) async throws -> Int64 {
        let rows = try await database.client.query(
            """
            SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'
            """, logger: database.logger)
        for try await count in rows.decode(Int64.self) { return count }
        return 0
    }

    private func waitForLockWaiters(_ count: Int64, _ database: Database) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try await lockWaiters(database) < count {
            guard ContinuousClock.now < deadline else {
                Issue.record("no statement waited for the uncommitted membership within 10 s")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

extension Result {
    fileprivate var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
