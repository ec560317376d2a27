import GeoChatDomain
import GeoChatTestSupport
import Testing

@testable import GatewayCore

/// The gateway's region index answers as the rooms service's region query does
/// (box edges included, the `cap` most recently visited, ordered by id), and
/// its load commutes with the events that arrive during it.
@Suite struct RoomIndexTests {
    struct Live {
        var room: RoomInfo
        var visitedAtMs: Int64
    }

    /// The rule, by brute force: what `PostgresRoomStore.region` answers.
    static func expected(_ rooms: [RoomID: Live], _ query: RegionQuery) -> [RoomID] {
        rooms.values
            .filter { query.zooms.contains($0.room.zoom.value) && query.box.contains($0.room.position) }
            .sorted { ($0.visitedAtMs, $0.room.id) > ($1.visitedAtMs, $1.room.id) }
            .prefix(query.cap)
            .map(\.room.id)
            .sorted()
    }

    static func point(_ random: inout SeededRandom, clustered: Bool) -> MercatorPoint {
        // Half the rooms in a few "cities", the others anywhere; some on cell edges exactly.
        if clustered {
            let city = Double(random.next(upTo: 5)) / 5 + 0.1
            let spread = 1.0 / Double(1 << random.next(upTo: 18))
            let x = city + Double(random.next(upTo: 1000)) / 1000 * spread
            let y = city + Double(random.next(upTo: 1000)) / 1000 * spread
            return MercatorPoint(x: min(x, 1), y: min(y, 1))!
        }
        if random.next(upTo: 10) == 0 {
            let bits = random.next(upTo: 18)
            let side = Double(UInt64(1) << bits)
            return MercatorPoint(
                x: Double(random.next(upTo: UInt64(side) + 1)) / side,
                y: Double(random.next(upTo: UInt64(side) + 1)) / side)!
        }
        return MercatorPoint(
            x: Double(random.next(upTo: 1 << 30)) / Double(1 << 30),
            y: Double(random.next(upTo: 1 << 30)) / Double(1 << 30))!
    }

    static func query(_ random: inout SeededRandom, near rooms: [Live]) -> RegionQuery {
        let n = Int(random.next(upTo: 18))
        let width = 0.625 / Double(1 << n) * Double(1 + random.next(upTo: 4))
        let center =
            rooms.isEmpty || random.next(upTo: 5) == 0
            ? MercatorPoint(x: Double(random.next(upTo: 1000)) / 1000, y: Double(random.next(upTo: 1000)) / 1000)!
            : rooms[Int(random.next(upTo: UInt64(rooms.count)))].room.position
        let a = MercatorPoint(x: max(0, center.x - width / 2), y: max(0, center.y - width * 0.8))!
        let b = MercatorPoint(x: min(1, center.x + width / 2), y: min(1, center.y + width * 0.8))!
        let low = max(0, n - Int(random.next(upTo: 5)))
        let high = min(17, n + Int(random.next(upTo: 5)))
        return RegionQuery(box: MercatorBox(a, b), zooms: low...high, cap: [1, 3, 20, 500][Int(random.next(upTo: 4))])
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func answersAsTheRoomsServiceDoesThroughCreatesVisitsAndRemovals(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var index = RoomIndex()
        var truth: [RoomID: Live] = [:]
        var clock: Int64 = 1_000_000
        for step in 0..<6000 {
            clock += Int64(random.next(upTo: 3))  // equal visit times happen: the id breaks the tie
            switch random.next(upTo: 10) {
            case 0..<5:
                let id = RoomID(Int64(step + 1))
                let room = RoomInfo(
                    id: id, position: Self.point(&random, clustered: random.next(upTo: 2) == 0),
                    zoom: ZoomLevel(Int(random.next(upTo: 18)))!, topic: "r\(id)")
                index.upsert(room, visitedAtMs: clock)
                truth[id] = Live(room: room, visitedAtMs: clock)
            case 5..<8:
                guard let id = truth.keys.randomElement(using: &random) else { continue }
                let at = clock - Int64(random.next(upTo: 4))  // an older visit changes nothing
                index.visit(id, atMs: at)
                truth[id]!.visitedAtMs = max(truth[id]!.visitedAtMs, at)
            case 8:
                guard let id = truth.keys.randomElement(using: &random) else { continue }
                index.remove(id)
                truth[id] = nil
            default:
                let query = Self.query(&random, near: Array(truth.values))
                #expect(
                    index.rooms(in: query).map(\.id) == Self.expected(truth, query),
                    "seed \(seed) step \(step) \(query)")
            }
        }
        #expect(index.count == truth.count)
        for _ in 0..<300 {
            let query = Self.query(&random, near: Array(truth.values))
            #expect(index.rooms(in: query).map(\.id) == Self.expected(truth, query), "seed \(seed) \(query)")
        }
    }

    @Test func theWholeWorldAtEveryZoomIsTheNewestCapOfAll() {
        var index = RoomIndex()
        var truth: [RoomID: Live] = [:]
        var random = SeededRandom(seed: 9)
        for id in (1...3000).map(RoomID.init) {
            let room = RoomInfo(
                id: id, position: Self.point(&random, clustered: id.rawValue % 2 == 0),
                zoom: ZoomLevel(Int(id.rawValue % 18))!, topic: "t")
            let at = Int64(random.next(upTo: 100_000))
            index.upsert(room, visitedAtMs: at)
            truth[id] = Live(room: room, visitedAtMs: at)
        }
        let world = RegionQuery(
            box: MercatorBox(MercatorPoint(x: 0, y: 0)!, MercatorPoint(x: 1, y: 1)!), zooms: 0...17, cap: 500)
        #expect(index.rooms(in: world).map(\.id) == Self.expected(truth, world))
        #expect(index.rooms(in: RegionQuery(box: world.box, zooms: 0...17, cap: 0)).isEmpty)
    }

    @Test func aLoadMeetsEventsInEitherOrder() {
        let map = RoomMap()
        let zoom = ZoomLevel(5)!
        func room(_ id: RoomID) -> RoomInfo {
            RoomInfo(id: id, position: MercatorPoint(x: 0.5, y: 0.5)!, zoom: zoom, topic: "\(id)")
        }
        let box = MercatorBox(MercatorPoint(x: 0, y: 0)!, MercatorPoint(x: 1, y: 1)!)
        #expect(map.rooms(in: RegionQuery(box: box, zooms: 5...5, cap: 10)) == nil, "no answer before the load")

        map.removed([2])  // removed after the page was read, before it arrived
        map.visited(3, atMs: 9_000)  // visited before its page arrived
        map.created(room(4), atMs: 5_000)  // created after the pages were read
        map.load([
            IndexedRoom(room: room(1), visitedAtMs: 1_000), IndexedRoom(room: room(2), visitedAtMs: 2_000),
            IndexedRoom(room: room(3), visitedAtMs: 3_000),
        ])
        map.load([IndexedRoom(room: room(4), visitedAtMs: 4_000)])  // its created event came first: no harm
        map.finishLoading()

        #expect(map.rooms(in: RegionQuery(box: box, zooms: 5...5, cap: 10))?.map(\.id) == [1, 3, 4])
        #expect(
            map.rooms(in: RegionQuery(box: box, zooms: 5...5, cap: 1))?.map(\.id) == [3],
            "the visit during the load counts")
        map.visited(1, atMs: 10_000)
        #expect(map.rooms(in: RegionQuery(box: box, zooms: 5...5, cap: 1))?.map(\.id) == [1])
        map.removed([1])
        #expect(map.rooms(in: RegionQuery(box: box, zooms: 5...5, cap: 10))?.map(\.id) == [3, 4])
    }

    @Test func anOperatorsChangeMovesARoomAndKeepsItsVisit() {
        var index = RoomIndex()
        let place = MercatorPoint(x: 0.25, y: 0.75)!
        let room = RoomInfo(id: 7, position: place, zoom: ZoomLevel(8)!, topic: "Before")
        index.upsert(room, visitedAtMs: 1_000)
        let moved = RoomInfo(id: 7, position: MercatorPoint(x: 0.5, y: 0.5)!, zoom: ZoomLevel(12)!, topic: "After")
        index.replace(moved)
        #expect(index.room(7) == moved)
        #expect(index.visitedAtMs(7) == 1_000)
        #expect(index.count == 1)
        let old = MercatorBox(MercatorPoint(x: 0.2, y: 0.7)!, MercatorPoint(x: 0.3, y: 0.8)!)
        #expect(index.rooms(in: RegionQuery(box: old, zooms: 0...17, cap: 10)).isEmpty)
        let new = MercatorBox(MercatorPoint(x: 0.49, y: 0.49)!, MercatorPoint(x: 0.51, y: 0.51)!)
        #expect(index.rooms(in: RegionQuery(box: new, zooms: 12...12, cap: 10)).map(\.id) == [7])
        // A page of the start-up catch-up that holds the change does the same.
        index.upsert(contentsOf: [IndexedRoom(room: room, visitedAtMs: 2_000)])
        #expect(index.room(7) == room)
        #expect(index.visitedAtMs(7) == 2_000)
    }

    @Test func aChangeSeenWhileLoadingIsNotUndoneByAnOlderPage() {
        let map = RoomMap()
        let room = RoomInfo(id: 9, position: MercatorPoint(x: 0.25, y: 0.75)!, zoom: ZoomLevel(8)!, topic: "Before")
        let changed = RoomInfo(id: 9, position: MercatorPoint(x: 0.5, y: 0.5)!, zoom: ZoomLevel(8)!, topic: "After")
        map.changed(changed)
        map.load([IndexedRoom(room: room, visitedAtMs: 1_000)])
        map.finishLoading()
        #expect(map.room(9) == changed)
    }
}
