import GeoChatDomain
import HTTPTypes
import Hummingbird
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

@testable import Gateway
@testable import GatewayCore

/// Push streams, written through a stand-in for the connection's body writer.
extension GatewayRouterTests {
    private func sessionAndRoom(topic: String) async throws -> (SessionInfo, RoomID) {
        let session = try await gateway.actions.start(nick: Nickname("Lydia")!, client: .unlimited)
        let room = try await gateway.actions.create(
            session: session.id, position: MercatorPoint(x: 0.5, y: 0.5)!, zoom: ZoomLevel(10)!,
            topic: try RoomTopic(checking: topic),
            client: .unlimited
        ).id
        return (session, room)
    }

    /// A subscriber that reads gets the stream's preamble, the participants and
    /// every message in id order; cancelling its task (shutdown) ends the body.
    @Test func aReadingSubscriberGetsEveryMessageInOrder() async throws {
        let actions = gateway.actions
        let (session, room) = try await sessionAndRoom(topic: "reading")
        let first = try await actions.say(
            session: session.id, room: room, text: try MessageText(checking: "before"), client: .unlimited
        ).id
        let written = Written()
        let events = gateway.events
        let stream = Task {
            let connection = NIOAsyncTestingChannel()
            let response = try events.open(room: room, after: first, client: .unlimited, connection: connection)
            try await response.body.write(RecordingWriter(written: written))
        }
        for n in 1...3 {
            _ = try await actions.say(
                session: session.id, room: room, text: try MessageText(checking: "message \(n)"), client: .unlimited)
        }
        for _ in 0..<500 where written.text.components(separatedBy: "event: message").count < 4 {
            try await Task.sleep(for: .milliseconds(10))
        }
        let text = written.text
        #expect(text.hasPrefix("retry: 2000\n\n"))
        #expect(text.contains("event: participants"))
        #expect(!text.contains("\"before\""), "resumed after the given id")
        let order = ["message 1", "message 2", "message 3"].map { text.range(of: "\"\($0)\"")?.lowerBound }
        #expect(
            order.allSatisfy { $0 != nil } && order == order.sorted { $0! < $1! }, "every message, in id order: \(text)"
        )
        #expect(events.pendingWrites.count == 0, "writes a reader takes are not left pending")
        #expect(events.subscribers == 1)
        stream.cancel()
        try await stream.value
        #expect(written.finished, "shutdown ends the body")
        #expect(events.subscribers == 0, "its place is given back")
    }

    /// A subscriber whose client goes away while the stream waits for news
    /// ends at once, not at its next keep-alive, and its place is given back.
    @Test func aWaitingSubscriberWhoseConnectionClosesEndsAtOnce() async throws {
        let (_, room) = try await sessionAndRoom(topic: "gone")
        let events = gateway.events
        let signals = gateway.actions.messages.signals
        let connection = NIOAsyncTestingChannel()
        try await connection.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).get()
        let waitingBefore = signals.waiting
        let written = Written()
        let stream = Task {
            let response = try events.open(room: room, after: 0, client: .unlimited, connection: connection)
            try await response.body.write(RecordingWriter(written: written))
        }
        for _ in 0..<500 where signals.waiting == waitingBefore { try await Task.sleep(for: .milliseconds(10)) }
        #expect(signals.waiting == waitingBefore + 1, "the stream waits for news")
        #expect(events.subscribers == 1)
        try await connection.close()
        // Well within the keep-alive (30 s), which would otherwise be the first write to fail.
        for _ in 0..<200 where events.subscribers > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(events.subscribers == 0, "woken by the close, the stream ended and gave its place back")
        #expect(signals.waiting == waitingBefore, "its ticket is given back")
        stream.cancel()  // ends it here if the close did not
        await #expect(throws: ChannelError.self) { try await stream.value }
        #expect(!written.finished)
    }

    /// A subscriber whose connection takes nothing holds one waiting write; the
    /// sweep closes its connection once that write is older than the write
    /// timeout (the client resumes by its last id), and its place is given back.
    @Test func aStalledSubscribersConnectionIsClosed() async throws {
        let (_, room) = try await sessionAndRoom(topic: "stall")
        let events = gateway.events
        let connection = NIOAsyncTestingChannel()
        try await connection.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).get()
        let closed = connection.closeFuture
        let stream = Task {
            let response = try events.open(room: room, after: 0, client: .unlimited, connection: connection)
            try await response.body.write(StalledWriter(closed: closed))
        }
        for _ in 0..<500 where events.pendingWrites.count == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(events.pendingWrites.count == 1, "the first write waits")
        let timeout = gateway.settings.push.writeTimeout
        #expect(events.pendingWrites.closeStalled(after: timeout) == 0, "not before the write timeout")
        #expect(connection.isActive)
        #expect(events.pendingWrites.closeStalled(after: timeout, now: .now + timeout) == 1)
        for _ in 0..<500 where connection.isActive { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!connection.isActive, "the stalled subscriber's connection is closed")
        // A sweep that failed to close it fails above rather than hanging here.
        if connection.isActive { try await connection.close() }
        await #expect(throws: ChannelError.self) { try await stream.value }
        #expect(events.pendingWrites.count == 0)
        for _ in 0..<200 where events.subscribers > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(events.subscribers == 0, "its place is given back")
    }
}

/// What a reading client received.
private final class Written: Sendable {
    private let state = Mutex<(text: String, finished: Bool)>(("", false))
    var text: String { state.withLock { $0.text } }
    var finished: Bool { state.withLock { $0.finished } }
    func append(_ buffer: ByteBuffer) { state.withLock { $0.text += String(buffer: buffer) } }
    func finish() { state.withLock { $0.finished = true } }
}

private struct RecordingWriter: ResponseBodyWriter {
    let written: Written
    mutating func write(_ buffer: ByteBuffer) async throws { written.append(buffer) }
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws { written.finish() }
}

/// A connection that takes nothing: each write waits until the connection is closed.
private struct StalledWriter: ResponseBodyWriter {
    let closed: EventLoopFuture<Void>
    mutating func write(_ buffer: ByteBuffer) async throws {
        try await closed.get()
        throw ChannelError.ioOnClosedChannel
    }
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
