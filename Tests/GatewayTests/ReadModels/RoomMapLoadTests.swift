import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import Logging
import Testing

@testable import Gateway
@testable import GatewayCore
@testable import RoomsService

/// A gateway's start-up load of its region index, over the rooms service's real
/// handlers on an in-memory store: every room arrives, whatever the number of id
/// ranges paged side by side, and the index answers as the store does.
@Suite struct RoomMapLoadTests {
    static let world = MercatorBox(MercatorPoint(x: 0, y: 0)!, MercatorPoint(x: 1, y: 1)!)

    static func cluster(rooms count: Int, now: @escaping @Sendable () -> Int64 = WallClock.nowMs) async throws -> (
        ServiceClients, InMemoryRoomStore
    ) {
        let logger = Logger(label: "room-map-test")
        let bus = InMemoryCommandBus()
        let store = InMemoryRoomStore(now: now)
        bus.register(
            RoomCommandHandlers(
                store: store, outbox: OutboxRelay(outbox: store.outbox, events: RecordedEvents(), logger: logger),
                operatorSeal: TestKeys.operatorSeal(), logger: logger
            ).handlers)
        for i in 0..<count {
            // Another creator each time: the same creator's same room within 10 s is one room.
            _ = try await store.create(
                session: SessionID.random(), position: MercatorPoint(x: Double(i % 97) / 97, y: Double(i % 89) / 89)!,
                zoom: ZoomLevel(i % 18)!, topic: "room \(i)")
        }
        return (ServiceClients(bus: bus, timeout: TestPatience.deadline), store)
    }

    @Test(arguments: [1, 3, 8])
    func everyRoomArrivesWhateverTheRanges(ranges: Int) async throws {
        // Over two pages per range for the smaller counts: page edges and range edges both matter.
        let (backend, store) = try await Self.cluster(rooms: 2 * ListRoomsPage.maxLimit + 37)
        let map = RoomMap()
        #expect(
            map.rooms(in: RegionQuery(box: Self.world, zooms: 0...17, cap: 10)) == nil, "not answered before the load")
        await map.loadAll(from: backend, ranges: ranges, logger: Logger(label: "room-map-test"))
        #expect(map.isLoaded)
        let all = try await store.page(after: 0, before: nil, changes: nil, limit: .max)
        #expect(map.count == all.count)
        for zooms in [0...17, 3...6, 12...12] {
            let query = RegionQuery(box: Self.world, zooms: zooms, cap: 500)
            #expect(map.rooms(in: query) == (try await store.region(query)))
        }
    }

    @Test func anEmptyStoreLoadsAtOnce() async throws {
        let logger = Logger(label: "room-map-test")
        let bus = InMemoryCommandBus()
        let store = InMemoryRoomStore()
        bus.register(
            RoomCommandHandlers(
                store: store, outbox: OutboxRelay(outbox: store.outbox, events: RecordedEvents(), logger: logger),
                operatorSeal: TestKeys.operatorSeal(), logger: logger
            ).handlers)
        let map = RoomMap()
        await map.loadAll(from: ServiceClients(bus: bus, timeout: TestPatience.deadline), ranges: 4, logger: logger)
        #expect(map.isLoaded)
        #expect(
            map.count == (try await store.page(after: 0, before: nil, changes: nil, limit: 10).count),
            "the lobby, if the store has one")
    }
}
