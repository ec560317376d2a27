import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import Logging
import Synchronization
import Testing

@testable import GatewayCore
@testable import RoomsService

/// A gateway's room snapshot: written and read back whole, refused when torn
/// or foreign, and at start caught up from the rooms service (rooms made,
/// visited and removed since), or given up for the full load when the rooms
/// service's tally says it holds other rooms.
@Suite struct RoomSnapshotTests {
    static let logger = Logger(label: "room-snapshot-test")
    static let world = MercatorBox(MercatorPoint(x: 0, y: 0)!, MercatorPoint(x: 1, y: 1)!)

    static func loaded(_ backend: ServiceClients, snapshot: RoomSnapshot.Contents? = nil, fromSnapshot: Bool? = nil)
        async -> RoomMap
    {
        let map = RoomMap()
        let load = await map.loadAll(from: backend, ranges: 2, snapshot: snapshot, logger: logger)
        if let fromSnapshot { #expect((load != .everyRoom) == fromSnapshot, "loaded from the snapshot") }
        return map
    }

    static func snapshot(of map: RoomMap, takenAtMs: Int64 = WallClock.nowMs(), chunkSlots: Int = 1000) throws
        -> [UInt8]
    {
        var bytes: [UInt8] = []
        _ = map.writeSnapshot(takenAtMs: takenAtMs, chunkSlots: chunkSlots) { bytes += $0 }
        return bytes
    }

    /// The map answers every question as the store does.
    static func expectSame(_ map: RoomMap, _ store: InMemoryRoomStore) async throws {
        #expect(map.isLoaded)
        #expect(map.tally == (try await store.tally()))
        for zooms in [0...17, 3...6, 12...12] {
            let query = RegionQuery(box: world, zooms: zooms, cap: 300)
            #expect(map.rooms(in: query) == (try await store.region(query)))
        }
    }

    @Test func aSnapshotReadsBackAsTheIndexItWasWrittenFrom() async throws {
        let (backend, store) = try await RoomMapLoadTests.cluster(rooms: 2500)
        let map = await Self.loaded(backend)
        let contents = try RoomSnapshot.Contents(try Self.snapshot(of: map, takenAtMs: 1_234))
        #expect(contents.takenAtMs == 1_234)
        #expect(contents.rooms == map.count)
        #expect(contents.highestID == (try await store.highestID()))
        var read: [IndexedRoom] = []
        contents.forEachPage(size: 700) {
            #expect($0.count <= 700)
            read += $0
        }
        let stored = try await store.page(after: 0, before: nil, changes: nil, limit: .max)
        #expect(read.sorted { $0.room.id < $1.room.id } == stored)
    }

    @Test func anEmptyIndexMakesAnEmptySnapshot() throws {
        let map = RoomMap()
        #expect(map.writeSnapshot(takenAtMs: 1) { _ in } == nil, "nothing before the index is loaded")
        map.finishLoading()
        let contents = try RoomSnapshot.Contents(try Self.snapshot(of: map))
        #expect(contents.rooms == 0 && contents.highestID == 0)
    }

    @Test func aTornOrForeignFileIsRefusedWhole() async throws {
        let (backend, _) = try await RoomMapLoadTests.cluster(rooms: 50)
        let bytes = try Self.snapshot(of: await Self.loaded(backend))
        #expect(throws: RoomSnapshotError.notASnapshot) { try RoomSnapshot.Contents([]) }
        #expect(throws: RoomSnapshotError.notASnapshot) { try RoomSnapshot.Contents(Array("hello".utf8) + bytes) }
        #expect(throws: RoomSnapshotError.damaged) { try RoomSnapshot.Contents(Array(bytes.dropLast(9))) }
        for position in [30, bytes.count / 2, bytes.count - 20] {
            var flipped = bytes
            flipped[position] ^= 0x40
            #expect(throws: RoomSnapshotError.damaged) { try RoomSnapshot.Contents(flipped) }
        }
    }

    @Test func aRestartCatchesUpWithWhatChangedSince() async throws {
        // The rooms service's clock: the rooms were made two hours ago, the snapshot taken an hour ago.
        let clock = Mutex(WallClock.nowMs() - 2 * 3_600_000)
        let (backend, store) = try await RoomMapLoadTests.cluster(rooms: 3000, now: { clock.withLock { $0 } })
        let before = await Self.loaded(backend)
        let takenAtMs = clock.withLock {
            $0 += 3_600_000
            return $0
        }
        let contents = try RoomSnapshot.Contents(try Self.snapshot(of: before, takenAtMs: takenAtMs))
        clock.withLock { $0 += 1_800_000 }
        // While the gateway is away: rooms made, visited, removed by an admin and by expiry.
        var made: [RoomID] = []
        for i in 0..<40 {
            made.append(
                try await store.create(
                    session: SessionID.random(), position: MercatorPoint(x: 0.3 + Double(i) / 1000, y: 0.6)!,
                    zoom: ZoomLevel(i % 18)!, topic: "made later \(i)"
                ).value.id)
        }
        let old = try await store.page(after: 1, before: nil, changes: nil, limit: 50).map(\.room.id)
        for room in old.prefix(10) {
            _ = try await store.join(room, session: SessionID.random(), nick: "n", nickVersion: 1, announce: false)
        }
        _ = try await store.removeNow(old[20], reason: "admin")
        _ = try await store.removeNow(made[3], reason: "admin")
        _ = try await store.removeIdleRooms(Array(old[30..<50]), before: Date().addingTimeInterval(60), reason: "job")

        let window = RoomChangeWindow(sinceMs: takenAtMs - 600_000, above: contents.highestID)
        #expect(
            try await store.page(after: 0, before: nil, changes: window, limit: .max).count == 39 + 10,
            "only what changed is asked for")
        let after = await Self.loaded(
            backend, snapshot: contents, fromSnapshot: true)
        try await Self.expectSame(after, store)
        #expect(after.room(old[20]) == nil && after.room(made[3]) == nil && after.room(made[4]) != nil)
    }

    @Test func aSnapshotOfOtherRoomsGivesWayToTheFullLoad() async throws {
        let (elsewhere, _) = try await RoomMapLoadTests.cluster(rooms: 300)
        let foreign = try RoomSnapshot.Contents(try Self.snapshot(of: await Self.loaded(elsewhere)))
        // Another database: fewer rooms, so ids the snapshot holds are not there.
        let (backend, store) = try await RoomMapLoadTests.cluster(rooms: 120)
        let map = await Self.loaded(backend, snapshot: foreign, fromSnapshot: false)
        try await Self.expectSame(map, store)
        #expect(map.count == 121, "the lobby and the 120 rooms, none of the snapshot's others")
    }

    @Test func theFileIsWrittenWholeAndReadBack() async throws {
        let (backend, store) = try await RoomMapLoadTests.cluster(rooms: 500)
        let map = await Self.loaded(backend)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("snapshot-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = RoomSnapshotFile(path: directory.appendingPathComponent("rooms.snapshot").path)
        #expect(await file.read(logger: Self.logger) == nil, "none yet")
        #expect(await file.write(RoomMap(), logger: Self.logger) == false, "an index not loaded is not written")
        #expect(await file.write(map, logger: Self.logger))
        #expect(await file.write(map, logger: Self.logger), "written over the last one")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["rooms.snapshot"])
        let contents = try #require(await file.read(logger: Self.logger))
        try await Self.expectSame(
            await Self.loaded(backend, snapshot: contents, fromSnapshot: true), store)

        try Data("not a snapshot".utf8).write(to: URL(fileURLWithPath: file.path))
        #expect(await file.read(logger: Self.logger) == nil, "refused, so the full load runs")
    }
}
