import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import GeoChatTestSupport
import Logging
import Testing

@testable import RoomsService

/// The rooms service's command handlers over an in-memory store and event log,
/// each command sent through the in-memory bus.
@Suite struct RoomCommandHandlersTests: RoomsServiceHarness {
    let store = InMemoryRoomStore()
    let events = RecordedEvents()
    let bus: InMemoryCommandBus
    let alice = SessionID.random()
    let operators = TestKeys.operatorSeal()
    let presence = PresenceView()

    init() {
        bus = Self.bus(store: store, events: events, presence: presence, operators: operators)
    }

    /// The service starts only with a handler for every rooms command (`WireCommands`).
    @Test func everyRoomsCommandHasAHandler() throws {
        let handlers = RoomCommandHandlers(
            store: store, outbox: OutboxRelay(outbox: store.outbox, events: events, logger: Logger(label: "test")),
            presence: presence, operatorSeal: operators, logger: Logger(label: "test")
        ).handlers
        try handlers.requireEvery()
    }

    /// `participants` reads the gateways' sightings beside the memberships: a
    /// member is as recent as its latest join, say, mark or sighting; a mark
    /// from a clock ahead of the owner's counts as now.
    @Test func membersCarryTheirLatestSignOfLife() async throws {
        let room = try await create("Presence")
        let bob = SessionID.random()
        _ = try await send(JoinRoom(room: room.id, session: alice, nick: "Alice"))
        _ = try await send(JoinRoom(room: room.id, session: bob, nick: "bob"))
        let joined = try await send(ListMembers(room: room.id))
        let now = WallClock.nowMs()
        presence.record(PresenceBatch(gateway: "g2", seenAtMs: now + 5_000, sessions: [bob]))
        presence.record(PresenceBatch(gateway: "g1", seenAtMs: now - 60_000, sessions: [alice]))
        let sighted = try await send(ListMembers(room: room.id))
        #expect(sighted.map(\.session) == [alice, bob])
        #expect(sighted[0].activeAtMs == joined[0].activeAtMs, "an older sighting changes nothing")
        #expect(sighted[1].activeAtMs == now + 5_000)
        _ = try await send(MarkPresent(session: alice, seenAtMs: now + 3_600_000, presenceTimeoutMs: 60_000))
        let marked = try await send(ListMembers(room: room.id))
        #expect((marked[0].activeAtMs ?? 0) < now + 60_000, "not later than the owner's now")
        #expect((marked[0].activeAtMs ?? 0) >= now)
        // A mark of a session published moments ago writes nothing: the sighting already stands.
        presence.record(PresenceBatch(gateway: "g2", seenAtMs: now, sessions: [alice]))
        _ = try await send(MarkPresent(session: alice, seenAtMs: now + 1_000, presenceTimeoutMs: 60_000))
        #expect(try await send(ListMembers(room: room.id))[0].activeAtMs == marked[0].activeAtMs)
        // A sighting older than a quarter of the timeout does not stand in for the mark.
        let carol = SessionID.random()
        _ = try await send(JoinRoom(room: room.id, session: carol, nick: "carol"))
        let joinedAt = try await send(ListMembers(room: room.id)).first { $0.session == carol }?.activeAtMs ?? 0
        presence.record(PresenceBatch(gateway: "g2", seenAtMs: joinedAt - 3_000, sessions: [carol]))
        try await Task.sleep(for: .milliseconds(20))
        let markedAt = WallClock.nowMs()
        _ = try await send(MarkPresent(session: carol, seenAtMs: markedAt, presenceTimeoutMs: 4_000))
        #expect(try await send(ListMembers(room: room.id)).first { $0.session == carol }?.activeAtMs == markedAt)
        presence.prune(nowMs: now + presence.memoryMs + 10_000)
        #expect(presence.count == 0)
    }

    /// A `create` as a foreign or buggy requester could put it on the wire: its topic unchecked.
    struct UncheckedCreate: RoomsWireCommand {
        typealias Reply = RoomInfo
        static let name = CreateRoom.name
        var session: SessionID
        var position: MercatorPoint
        var zoom: ZoomLevel
        var topic: String
        var partitionKey: String? { session.value }
    }

    @Test func createMakesARoomOnceWithinTheRetryWindowAndAnnouncesIt() async throws {
        let room = try await create("  Harbour  ")
        #expect(room.topic == "Harbour", "the topic is trimmed")
        #expect(try await create("Harbour") == room, "a phone's retry gets the same room")
        let created = events.published(RoomEvent.self)
        #expect(created.count == 1, "a retry announces nothing: the first event is out or in the outbox")
        for event in created {
            guard case .created(let announced) = event else {
                Issue.record("not a created event: \(event)")
                return
            }
            #expect(announced == room)
        }
        #expect(try await send(LookupRoom(room: room.id)) == room)
    }

    @Test(arguments: ["", "   ", String(repeating: "t", count: Limits.topicLength.upperBound + 1)])
    func aBadTopicIsRefusedAndNothingIsMade(_ topic: String) async throws {
        #expect(throws: ProtocolError.self) { try RoomTopic(checking: topic) }
        // On the wire: the topic's rule is checked as the command is decoded, and its error is the answer.
        let error = await #expect(throws: RequestError.self) {
            try await send(
                UncheckedCreate(
                    session: alice, position: MercatorPoint(x: 0.25, y: 0.25)!, zoom: ZoomLevel(9)!, topic: topic))
        }
        #expect(
            error.map { if case .refused(let refused) = $0 { refused.code != .unavailable } else { false } } == true)
        #expect(events.count == 0)
        #expect(try await store.adminList(search: "", limit: 10).count == 1, "only the lobby")
    }

    @Test func findRoomsAnswersTheBoxAndZoomRangeNewestVisitFirstWithinTheCap() async throws {
        let inside = try await create("inside", x: 0.3, y: 0.3, z: 10)
        let edge = try await create("edge", x: 0.4, y: 0.4, z: 12)
        _ = try await create("outside the box", x: 0.6, y: 0.3, z: 10)
        _ = try await create("outside the zooms", x: 0.3, y: 0.3, z: 14)
        let box = MercatorBox(MercatorPoint(x: 0.4, y: 0.4)!, MercatorPoint(x: 0.2, y: 0.2)!)
        let found = try await send(FindRooms(RegionQuery(box: box, zooms: 9...12, cap: 10)))
        #expect(found.map(\.id) == [inside.id, edge.id])
        // Over the cap, the most recently visited stay.
        _ = try await send(JoinRoom(room: inside.id, session: alice, nick: "Alice"))
        let capped = try await send(FindRooms(RegionQuery(box: box, zooms: 9...12, cap: 1)))
        #expect(capped.map(\.id) == [inside.id])
    }

    @Test func joinLeaveAndMembersFollowTheMembershipAndAnnounceIt() async throws {
        let room = try await create("Members")
        let bob = SessionID.random()
        _ = try await send(JoinRoom(room: room.id, session: bob, nick: "bob"))
        _ = try await send(JoinRoom(room: room.id, session: alice, nick: "Alice"))
        #expect(
            try await send(ListMembers(room: room.id)).map(\.nick) == ["Alice", "bob"], "byte order: upper case first")
        _ = try await send(LeaveRoom(room: room.id, session: bob))
        #expect(try await send(ListMembers(room: room.id)).map(\.session) == [alice])
        let kinds = events.published(RoomEvent.self).map { event -> String in
            switch event {
            case .created: "created"
            case .changed: "changed"
            case .joined: "joined"
            case .left: "left"
            case .removed, .removedRooms: "removed"
            }
        }
        #expect(kinds == ["created", "joined", "joined", "left"])
        for command in [ListMembers(room: 999)] {
            await #expect(throws: RequestError.refused(.noSuchChat)) { try await send(command) }
        }
        await #expect(throws: RequestError.refused(.noSuchChat)) {
            try await send(JoinRoom(room: 999, session: alice, nick: "Alice"))
        }
        await #expect(throws: RequestError.refused(.noSuchChat)) {
            try await send(LeaveRoom(room: 999, session: alice))
        }
    }

    /// A say's author is joined by the `JoinBySaying` the gateway posts beside
    /// the say, the one path: a new member is announced once (push subscribers
    /// read a room's participants again only on a `joined` event), a member
    /// saying again only renews the membership.
    @Test func aSayersJoinIsAnnouncedOnceForANewMember() async throws {
        let room = try await create("Sayers")
        let bob = SessionID.random()
        for _ in 0..<3 { _ = try await send(JoinBySaying(room: room.id, session: bob, nick: "bob")) }
        let joined = events.published(RoomEvent.self).filter {
            if case .joined(room.id, bob, "bob") = $0 { true } else { false }
        }
        #expect(joined.count == 1)
        #expect(try await send(ListMembers(room: room.id)).map(\.session).contains(bob))
    }

    @Test func theLobbyIsFoundAndCannotBeRemoved() async throws {
        let lobby = try await send(LocateLobby())
        #expect(lobby.topic == "Lobby")
        await #expect(throws: RequestError.self) {
            try await send(operators.sealed(RemoveRoom(room: lobby.id, by: "admin")))
        }
        #expect(try await send(LookupRoom(room: lobby.id)) == lobby)
    }

    @Test func expiryRemovesOnlyRoomsStillIdleAndARetryLearnsTheWholeOutcome() async throws {
        let clock = TestClock(nowMs: 10_000_000)
        let store = InMemoryRoomStore(now: clock.read)
        let events = RecordedEvents()
        let bus = Self.bus(store: store, events: events, operators: operators)
        let point = MercatorPoint(x: 0.5, y: 0.5)!
        var idle: [RoomID] = []
        for i in 0..<3 {
            idle.append(
                try await store.create(session: alice, position: point, zoom: ZoomLevel(5)!, topic: "idle \(i)").value
                    .id)
        }
        clock.advance(by: 100_000)
        let visited = try await store.create(session: alice, position: point, zoom: ZoomLevel(5)!, topic: "visited")
            .value.id
        let cutoff = clock.read() - 50_000
        let page = try await bus.send(
            SelectIdleRooms(after: 0, idleBeforeMs: cutoff, limit: 10, job: 1), within: TestPatience.deadline)
        #expect(page == idle, "never the lobby, never a visited room")
        // A visit after the selection saves it.
        _ = try await store.join(idle[0], session: alice, nick: "Alice", nickVersion: 1, announce: false)
        let unsealed = RemoveIdleRooms(rooms: page + [visited], idleBeforeMs: cutoff, reason: "expiry 1", job: 1)
        await #expect(throws: RequestError.self) { try await bus.send(unsealed, within: TestPatience.deadline) }
        let command = operators.sealed(unsealed)
        let removed = try await bus.send(command, within: TestPatience.deadline)
        #expect(removed.sorted() == [idle[1], idle[2]])
        #expect(
            try await bus.send(command, within: TestPatience.deadline).sorted() == [idle[1], idle[2]],
            "the retry's answer")
        guard case .removedRooms(let announced, _) = events.published(RoomEvent.self).last else {
            Issue.record("no removal event")
            return
        }
        #expect(announced.sorted() == [idle[1], idle[2]])
        await #expect(throws: RequestError.self) {
            try await bus.send(
                operators.sealed(
                    RemoveIdleRooms(
                        rooms: (1...Int64(Limits.maxRoomBatch + 1)).map(RoomID.init), idleBeforeMs: cutoff, reason: "x",
                        job: 1)),
                within: TestPatience.deadline)
        }
    }
}
