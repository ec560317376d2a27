import GeoChatDomain
import GeoChatTestSupport
import Testing

@testable import GatewayCore

/// The region index's compact storage (issue 28): removed rooms' slots are
/// reused, their topics' bytes given back, the id table grows and shrinks its
/// probe runs correctly, and batches (a load's pages, an expiry's removals)
/// answer as the same changes room by room.
@Suite struct RoomIndexStorageTests {
    typealias Live = RoomIndexTests.Live

    static func room(_ id: Int64, _ random: inout SeededRandom, topic: String? = nil) -> RoomInfo {
        RoomInfo(
            id: RoomID(id), position: RoomIndexTests.point(&random, clustered: random.next(upTo: 2) == 0),
            zoom: ZoomLevel(Int(random.next(upTo: 18)))!, topic: topic ?? "bench room \(id) é")
    }

    @Test func aRemovedRoomsSlotIsReusedAndQueriesStillAnswer() {
        var random = SeededRandom(seed: 21)
        var index = RoomIndex()
        var truth: [RoomID: Live] = [:]
        for id in 1...1000 as ClosedRange<Int64> {
            let room = Self.room(id, &random)
            index.upsert(room, visitedAtMs: id)
            truth[room.id] = Live(room: room, visitedAtMs: id)
        }
        #expect(index.slotCapacity == 1000)
        let removed = (1...1000).filter { $0 % 2 == 0 }.map { RoomID(Int64($0)) }
        index.remove(contentsOf: Array(removed[..<400]))  // in bulk
        for id in removed[400...] { index.remove(id) }  // one by one
        for id in removed { truth[id] = nil }
        #expect(index.count == 500)
        #expect(index.freeSlotCount == 500)
        for id in removed { #expect(index.room(id) == nil) }

        for id in 1001...1500 as ClosedRange<Int64> {
            let room = Self.room(id, &random)
            index.upsert(room, visitedAtMs: id)
            truth[room.id] = Live(room: room, visitedAtMs: id)
        }
        #expect(index.slotCapacity == 1000, "the new rooms took the free slots")
        #expect(index.freeSlotCount == 0)
        #expect(index.count == 1000)
        for live in truth.values { #expect(index.room(live.room.id) == live.room) }
        let world = MercatorBox(MercatorPoint(x: 0, y: 0)!, MercatorPoint(x: 1, y: 1)!)
        for cap in [1, 20, 500, 2000] {
            let query = RegionQuery(box: world, zooms: 0...17, cap: cap)
            #expect(index.rooms(in: query).map(\.id) == RoomIndexTests.expected(truth, query))
        }
        for _ in 0..<200 {
            let query = RoomIndexTests.query(&random, near: Array(truth.values))
            #expect(index.rooms(in: query).map(\.id) == RoomIndexTests.expected(truth, query), "\(query)")
        }
    }

    @Test func removedTopicsAreCompactedAway() {
        var random = SeededRandom(seed: 22)
        var index = RoomIndex()
        let topic = { (id: Int64) in "a topic of some length for room \(id), ünïcode ✓" }
        for id in 1...10_000 as ClosedRange<Int64> {
            index.upsert(Self.room(id, &random, topic: topic(id)), visitedAtMs: id)
        }
        let full = index.topicBytes
        #expect(full == (1...10_000).reduce(0) { $0 + topic(Int64($1)).utf8.count })
        index.remove(contentsOf: (1...9000).map { RoomID(Int64($0)) })
        #expect(index.topicBytes < full / 2, "compacted once garbage outweighed the live bytes")
        for id in 9001...10_000 as ClosedRange<Int64> { #expect(index.room(RoomID(id))?.topic == topic(id)) }
        // One by one, the same (garbage stays below 64 KiB or the live bytes).
        for id in 9001...9900 as ClosedRange<Int64> { index.remove(RoomID(id)) }
        #expect(index.topicBytes < full / 4)
        for id in 9901...10_000 as ClosedRange<Int64> { #expect(index.room(RoomID(id))?.topic == topic(id)) }

        // The last room gone: nothing is kept.
        index.remove(contentsOf: (9901...10_000).map { RoomID(Int64($0)) })
        #expect(index.count == 0)
        #expect(index.slotCapacity == 0)
        #expect(index.topicBytes == 0)
        #expect(index.idTableCapacity == 0)
    }

    @Test func theIdTableGrowsAndKeepsEveryIdThroughRemovals() {
        var random = SeededRandom(seed: 23)
        var records: [RoomRecord] = []
        var map = RoomSlotMap()
        var live: [Int64: Int32] = [:]
        // Sequential ids, as the database gives them, and ids anywhere in Int64's positive range.
        for n in 0..<50_000 {
            let id = n % 2 == 0 ? Int64(n) + 1 : Int64(random.next(upTo: UInt64(Int64.max))) + 1
            guard live[id] == nil else { continue }
            let slot = Int32(records.count)
            records.append(
                RoomRecord(id: id, x: 0, y: 0, visitedAtMs: 0, topicOffset: 0, topicLength: 0, zoom: 0))
            map.insert(slot, in: records)
            live[id] = slot
        }
        #expect(map.count == live.count)
        #expect(map.capacity.nonzeroBitCount == 1, "a power of two")
        #expect(map.capacity * 7 >= map.count * 10, "at most 70 % full")
        for (id, slot) in live { #expect(map.slot(of: id, in: records) == slot) }
        #expect(map.slot(of: -5, in: records) == nil)
        #expect(map.slot(of: 0, in: records) == nil)
        // Remove two thirds in random order: every other id is still found.
        var order = Array(live.keys)
        order.shuffle(using: &random)
        for id in order[..<(order.count * 2 / 3)] {
            #expect(map.remove(id, in: records) == live[id])
            live[id] = nil
        }
        #expect(map.count == live.count)
        for (id, slot) in live { #expect(map.slot(of: id, in: records) == slot) }
        for id in order[..<100] where live[id] == nil { #expect(map.slot(of: id, in: records) == nil) }
    }

    @Test func aLayoutByCellPutsACellsRoomsSideBySide() {
        var index = RoomIndex()
        // Made in id order, alternating between two places far apart: a cell's rooms lie every other slot.
        for id in 1...40 {
            let x = id % 2 == 0 ? 0.75 : 0.25
            let room = RoomInfo(
                id: RoomID(Int64(id)), position: MercatorPoint(x: x, y: 0.5)!, zoom: ZoomLevel(10)!,
                topic: "room \(id)")
            index.upsert(room, visitedAtMs: Int64(id))
        }
        index.remove(RoomID(2))
        #expect(index.freeSlotCount == 1)
        let done = index.layOutByCell()
        #expect(done)
        #expect(index.freeSlotCount == 0)
        #expect(index.slotCapacity == 39)
        var laidOut: [(x: Double, id: Int64, topic: String)] = []
        index.forEachRoom(inSlots: 0..<index.slotCapacity) { record, topic in
            laidOut.append((record.x, record.id, String(decoding: topic, as: UTF8.self)))
        }
        #expect(laidOut.map(\.x) == Array(repeating: 0.25, count: 20) + Array(repeating: 0.75, count: 19))
        #expect(
            laidOut.map(\.id) == Array(stride(from: 1, through: 39, by: 2)) + Array(stride(from: 4, through: 40, by: 2))
        )
        #expect(laidOut.allSatisfy { $0.topic == "room \($0.id)" })
        #expect(index.room(RoomID(7))?.topic == "room 7")
    }

    /// Batched upserts (with duplicates and already known rooms) and bulk removals
    /// against the same brute-force truth as `RoomIndexTests`, nearby search included.
    @Test(arguments: [31, 32, 33] as [UInt64])
    func batchesAnswerAsTheSameChangesOneByOne(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var index = RoomIndex()
        var truth: [RoomID: Live] = [:]
        var clock: Int64 = 1_000
        var nextID: Int64 = 1
        for step in 0..<300 {
            clock += Int64(random.next(upTo: 3))
            switch random.next(upTo: 4) {
            case 0, 1:
                var page: [IndexedRoom] = []
                for _ in 0..<Int(random.next(upTo: 60)) {
                    if random.next(upTo: 6) == 0, let known = truth.values.randomElement(using: &random) {
                        page.append(IndexedRoom(room: known.room, visitedAtMs: clock - Int64(random.next(upTo: 3))))
                    } else {
                        page.append(IndexedRoom(room: Self.room(nextID, &random), visitedAtMs: clock))
                        if random.next(upTo: 8) == 0 {  // the same room twice in a page, visited later
                            page.append(IndexedRoom(room: page.last!.room, visitedAtMs: clock + 1))
                        }
                        nextID += 1
                    }
                }
                index.upsert(contentsOf: page)
                for entry in page {
                    let before = truth[entry.room.id]?.visitedAtMs ?? .min
                    truth[entry.room.id] = Live(
                        room: truth[entry.room.id]?.room ?? entry.room, visitedAtMs: max(before, entry.visitedAtMs))
                }
            case 2:
                var ids = Array(truth.keys.shuffled(using: &random).prefix(Int(random.next(upTo: 80))))
                ids.append(RoomID(nextID + 1000))  // unknown: no harm
                ids.append(contentsOf: ids.prefix(3))  // named twice: removed once
                index.remove(contentsOf: ids)
                for id in ids { truth[id] = nil }
            default:
                for _ in 0..<20 {
                    guard let id = truth.keys.randomElement(using: &random) else { break }
                    let at = clock + Int64(random.next(upTo: 5)) - 2
                    index.visit(id, atMs: at)
                    truth[id]!.visitedAtMs = max(truth[id]!.visitedAtMs, at)
                }
            }
            // As a gateway does once its start-up load is in; here again and again between changes.
            if random.next(upTo: 8) == 0 {
                let done = index.layOutByCell()
                #expect(done, "step \(step)")
            }
            #expect(index.count == truth.count)
            let query = RoomIndexTests.query(&random, near: Array(truth.values))
            #expect(index.rooms(in: query).map(\.id) == RoomIndexTests.expected(truth, query), "step \(step)")
        }
        for live in truth.values {
            #expect(index.room(live.room.id) == live.room)
            #expect(index.visitedAtMs(live.room.id) == live.visitedAtMs)
        }
        let rooms = truth.values.map(\.room)
        // Centres away from the map's edges (as `RoomIndexNearestTests`' places are).
        for center in rooms.filter({ (0.2...0.8).contains($0.position.y) }).prefix(10) {
            let query = NearbyQuery(
                center: GeoPoint(center.position), radiusMetres: 50_000, limit: 50, zooms: 0...17)!
            #expect(index.nearest(query).map(\.room.id) == RoomIndexNearestTests.expected(rooms, query).map(\.0))
        }
    }
}
