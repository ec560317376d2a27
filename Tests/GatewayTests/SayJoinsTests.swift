import GeoChatDomain
import Testing

@testable import Gateway
@testable import GatewayCore

/// Saying joins the room: the sayer is a member once the say is answered, and
/// only a new membership is announced (a `joined` event wakes every push
/// subscriber of the room to read its participants again).
extension GatewayRouterTests {
    private func joins(of session: SessionID, in room: RoomID) -> Int {
        published.published(RoomEvent.self).filter {
            if case .joined(room, session, _) = $0 { return true }
            return false
        }.count
    }

    @Test func aSayJoinsItsAuthorAndOnlyANewMembershipIsAnnounced() async throws {
        let actions = gateway.actions
        let session = try await actions.start(nick: Nickname("Lydia")!, client: .unlimited)
        let room = try await actions.create(
            session: session.id, position: MercatorPoint(x: 0.25, y: 0.5)!, zoom: ZoomLevel(10)!,
            topic: try RoomTopic(checking: "members"),
            client: .unlimited
        ).id
        _ = try await actions.say(
            session: session.id, room: room, text: try MessageText(checking: "one"), client: .unlimited)
        #expect(joins(of: session.id, in: room) == 1, "the first say joins")
        #expect(
            try await actions.participants(of: room, client: .unlimited) == ["Lydia"],
            "a member before the say is answered")
        _ = try await actions.say(
            session: session.id, room: room, text: try MessageText(checking: "two"), client: .unlimited)
        #expect(joins(of: session.id, in: room) == 1, "a member's say changes no list")

        try await actions.leave(session: session.id, room: room, client: .unlimited)
        #expect(try await actions.participants(of: room, client: .unlimited) == [])
        _ = try await actions.say(
            session: session.id, room: room, text: try MessageText(checking: "three"), client: .unlimited)
        #expect(joins(of: session.id, in: room) == 2, "after a leave the say joins again")
        #expect(try await actions.participants(of: room, client: .unlimited) == ["Lydia"])
    }
}
