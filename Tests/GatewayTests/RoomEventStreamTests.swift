import GeoChatDomain
import NIOEmbedded
import Testing

@testable import Gateway

/// Push streams whose subscriber does not read.
extension GatewayRouterTests {
    /// A stream nobody reads holds at most its queue: once the queue is full the
    /// gateway closes the connection (the client resumes by its last id), and the
    /// subscriber's place is given back.
    @Test func aStalledSubscribersConnectionIsClosed() async throws {
        let actions = gateway.actions
        let session = try await actions.start(nick: Nickname("Lydia")!)
        let room = try await actions.create(
            session: session.id, position: MercatorPoint(x: 0.5, y: 0.5)!, zoom: ZoomLevel(10)!, topic: "stall"
        ).id
        let connection = EmbeddedChannel()
        try await connection.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).get()
        // The response is kept and its body never read: a subscriber that stopped reading.
        let response = try gateway.events.open(room: room, after: 0, address: "test", connection: connection)
        #expect(gateway.events.subscribers == 1)
        let queued = RoomEventStream.queueDepth * gateway.settings.push.batch
        for n in 1...(queued + 2 * gateway.settings.push.batch) {
            _ = try await actions.say(session: session.id, room: room, text: "message \(n)")
            if !connection.isActive { break }
        }
        for _ in 0..<200 where connection.isActive { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!connection.isActive, "the stalled subscriber's connection is closed")
        for _ in 0..<200 where gateway.events.subscribers > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(gateway.events.subscribers == 0, "its place is given back")
        _ = response
    }
}
