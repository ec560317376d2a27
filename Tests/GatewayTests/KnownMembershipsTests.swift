import GeoChatDomain
import Testing

@testable import Gateway

/// A member's say does not join the room again; a leave makes the next say join.
extension GatewayRouterTests {
    private func joins(of session: SessionID, in room: RoomID) -> Int {
        published.published(RoomEvent.self).filter {
            if case .joined(room, session, _) = $0 { return true }
            return false
        }.count
    }

    @Test func aMembersSayJoinsTheRoomOnlyOnce() async throws {
        let actions = gateway.actions
        let session = try await actions.start(nick: Nickname("Lydia")!)
        let room = try await actions.create(
            session: session.id, position: MercatorPoint(x: 0.25, y: 0.5)!, zoom: ZoomLevel(10)!, topic: "members"
        ).id
        _ = try await actions.say(session: session.id, room: room, text: "one")
        #expect(joins(of: session.id, in: room) == 1, "the first say joins")
        #expect(try await actions.participants(of: room) == ["Lydia"], "a member before the say is answered")
        _ = try await actions.say(session: session.id, room: room, text: "two")
        #expect(joins(of: session.id, in: room) == 1, "a member's say does not join again")

        try await actions.leave(session: session.id, room: room)
        _ = try await actions.say(session: session.id, room: room, text: "three")
        #expect(joins(of: session.id, in: room) == 2, "after a leave the say joins again")
        #expect(try await actions.participants(of: room) == ["Lydia"])

        // A leave through another gateway reaches this one as a `left` event.
        gateway.memberships.left(session.id, room)
        _ = try await actions.say(session: session.id, room: room, text: "four")
        #expect(joins(of: session.id, in: room) == 3)
    }

    @Test func aKnownMembershipIsTrustedForItsFreshnessOnly() {
        let memberships = KnownMemberships(freshness: { .seconds(60) }, capacity: 2)
        let now = ContinuousClock.now
        let a = SessionID.random(), b = SessionID.random(), c = SessionID.random()
        memberships.confirmed(a, 7, now: now)
        #expect(memberships.isMember(a, of: 7, now: now + .seconds(59)))
        #expect(!memberships.isMember(a, of: 7, now: now + .seconds(60)))
        #expect(!memberships.isMember(a, of: 8, now: now))
        memberships.confirmed(b, 7, now: now + .seconds(30))
        memberships.confirmed(c, 7, now: now)
        #expect(!memberships.isMember(c, of: 7, now: now), "past its capacity nothing more is kept")
        memberships.prune(now: now + .seconds(61))
        #expect(memberships.count == 1 && memberships.isMember(b, of: 7, now: now + .seconds(61)))
    }
}
