import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import Testing

@testable import RoomsService

/// What operators do to rooms (`RoomAdministration`): the commands sealed and
/// announced through the handlers, and a change's rules on both stores — what is
/// given changes and the rest stays, the `changed` event is staged with it, the
/// lobby and unknown rooms are refused, and a changed room is in a gateway's catch-up window.
@Suite struct RoomAdministrationTests: RoomsServiceHarness {
    let store = InMemoryRoomStore()
    let events = RecordedEvents()
    let bus: InMemoryCommandBus
    let alice = SessionID.random()
    let operators = TestKeys.operatorSeal()

    init() {
        bus = Self.bus(store: store, events: events, operators: operators)
    }

    @Test func anAdminChangeIsSealedAndAnnounced() async throws {
        let room = try await create("Misplaced")
        let topic = try RoomTopic(checking: "Put right")
        let change = ChangeRoom(room: room.id, topic: topic, position: nil, zoom: ZoomLevel(3), by: "root")
        var retargeted = operators.sealed(ChangeRoom(room: 1, topic: topic, position: nil, zoom: nil, by: "root"))
        retargeted.room = room.id
        for forged in [change, TestKeys.operatorSeal().sealed(change), retargeted] {
            await #expect(throws: RequestError.self, "a forged change changes nothing") { try await send(forged) }
        }
        #expect(try await send(LookupRoom(room: room.id)) == room)
        let changed = try await send(operators.sealed(change))
        #expect(changed.topic == "Put right" && changed.zoom == ZoomLevel(3) && changed.position == room.position)
        #expect(events.published(RoomEvent.self).last == .changed(changed))
        #expect(try await send(LookupRoom(room: room.id)) == changed)
        await #expect(throws: RequestError.refused(.noSuchChat)) {
            try await send(operators.sealed(ChangeRoom(room: 999, topic: topic, position: nil, zoom: nil, by: "root")))
        }
    }

    @Test func anAdminRemovalRemovesAndAnnouncesIt() async throws {
        let room = try await create("Doomed")
        // Unsealed, sealed with another key, or changed after sealing: refused, nothing removed.
        let forged = [
            RemoveRoom(room: room.id, by: "root"),
            TestKeys.operatorSeal().sealed(RemoveRoom(room: room.id, by: "root")),
            {
                var moved = operators.sealed(RemoveRoom(room: 1, by: "root"))
                moved.room = room.id
                return moved
            }(),
        ]
        for command in forged {
            do {
                _ = try await send(command)
                Issue.record("a forged removal was carried out")
            } catch {
                guard case .refused(let refusal) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(refusal.code == .badParam && refusal.text.contains("operator key"))
            }
        }
        #expect(try await send(LookupRoom(room: room.id)).id == room.id, "a forged removal removed nothing")
        _ = try await send(operators.sealed(RemoveRoom(room: room.id, by: "root")))
        await #expect(throws: RequestError.refused(.noSuchChat)) { try await send(LookupRoom(room: room.id)) }
        guard case .removed(let removed, let reason) = events.published(RoomEvent.self).last else {
            Issue.record("no removed event")
            return
        }
        #expect(removed == room.id && reason == "admin")
        await #expect(throws: RequestError.refused(.noSuchChat)) {
            try await send(operators.sealed(RemoveRoom(room: room.id, by: "root")))
        }
    }

    @Test func theInMemoryStoreKeepsTheChangeRules() async throws {
        try await Self.checkChanges(InMemoryRoomStore())
    }

    @Test(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
    func thePostgresStoreKeepsTheChangeRules() async throws {
        try await ScratchDatabase.with { database in
            let store = PostgresRoomStore(database: database)
            try await store.migrate()
            try await Self.checkChanges(store)
        }
    }

    static func checkChanges(_ store: some RoomStore) async throws {
        let lobby = try #require(try await store.lobby())
        let place = MercatorPoint(x: 0.25, y: 0.75)!
        let room = try await store.create(session: .random(), position: place, zoom: ZoomLevel(8)!, topic: "Before")
            .value
        let before = WallClock.nowMs() - 1000
        // Long after the window's start, so only the change can bring the room into it.
        let window = RoomChangeWindow(sinceMs: WallClock.nowMs() + 60_000, above: room.id)
        #expect(try await store.page(after: 0, before: nil, changes: window, limit: 10).isEmpty)

        let moved = MercatorPoint(x: 0.5, y: 0.5)!
        let topic = try await store.change(room.id, topic: "After", position: nil, zoom: nil)
        let renamed = RoomInfo(id: room.id, position: place, zoom: ZoomLevel(8)!, topic: "After")
        #expect(topic.value == .changed(renamed), "what is not given stays")
        #expect(topic.event?.record.decode(RoomEvent.self) == .changed(renamed), "the change stages its event")
        let place2 = try await store.change(room.id, topic: nil, position: moved, zoom: ZoomLevel(12)!)
        let now = RoomInfo(id: room.id, position: moved, zoom: ZoomLevel(12)!, topic: "After")
        #expect(place2.value == .changed(now))
        #expect(try await store.find(room.id) == now)
        let box = MercatorBox(MercatorPoint(x: 0.49, y: 0.49)!, MercatorPoint(x: 0.51, y: 0.51)!)
        #expect(try await store.region(RegionQuery(box: box, zooms: 12...12, cap: 10)).map(\.id) == [room.id])
        let old = MercatorBox(MercatorPoint(x: 0.2, y: 0.7)!, MercatorPoint(x: 0.3, y: 0.8)!)
        #expect(try await store.region(RegionQuery(box: old, zooms: 0...17, cap: 10)).isEmpty)
        let caughtUp = try await store.page(
            after: 0, before: nil, changes: RoomChangeWindow(sinceMs: before, above: room.id), limit: 10)
        #expect(caughtUp.map(\.room) == [now], "a gateway catching up from its snapshot gets the change")

        let refused = try await store.change(lobby.id, topic: "Not the lobby", position: nil, zoom: nil)
        #expect(refused.value == .lobby && refused.event == nil)
        #expect(try await store.lobby()?.topic == lobby.topic)
        let unknown = try await store.change(999_999, topic: "Nowhere", position: nil, zoom: nil)
        #expect(unknown.value == .noSuchRoom && unknown.event == nil)
    }
}
