import GeoChatDomain
import Hummingbird
import HTTPTypes
import Logging
import GeoChatMetrics
import Metrics
import NIOCore
import Synchronization

/// Push: a room's new messages and participant changes as Server-Sent Events
/// (`GET /api/v1/rooms/{id}/events`).
///
/// Each subscriber reads the same gap-free timelines the polls read, woken by
/// `RoomSignals`, so a stream never skips or repeats an id. It resumes from
/// `Last-Event-ID` (which browsers send on reconnecting) or `?after=`, on this
/// gateway or any other: ids are the room's message ids, the same everywhere.
///
/// Memory per subscriber is bounded: what it has not yet written waits in a
/// queue of `queueDepth` batches of at most `push.batch` messages (behind the
/// connection's own write buffer, which backpressure bounds); a subscriber
/// that lets the queue fill (a stalled connection) has its connection closed,
/// and resumes by its last id when it comes back. At most
/// `push.maxSubscribers` streams and long polls wait per gateway.
final class RoomEventStream: Sendable {
    private let actions: ChatActions
    private let participants: ParticipantLists
    private let settings: PushSettings
    private let limiter: RateLimiter
    private let logger: Logger
    private let open = Atomic<Int>(0)

    /// Batches a subscriber may have waiting to be written.
    static let queueDepth = 8

    init(actions: ChatActions, participants: ParticipantLists, settings: PushSettings, limiter: RateLimiter, logger: Logger) {
        self.actions = actions
        self.participants = participants
        self.settings = settings
        self.limiter = limiter
        self.logger = logger
    }

    var subscribers: Int { open.load(ordering: .relaxed) }

    /// Where a stream starts: after `Last-Event-ID`, else `?after=`, else the
    /// room's latest `push.batch` messages first.
    static func resumePoint(_ request: Request, _ parameters: APIParameters) throws(ProtocolError) -> MessageID {
        if let raw = request.headers[lastEventID] {
            guard let id = Int64(raw), id >= 0 else { throw .bad("Last-Event-ID", "is not a message id (0 or more)") }
            return id
        }
        return try parameters.messageID("after")
    }

    static let lastEventID = HTTPField.Name("Last-Event-ID")!

    /// The stream's response for a room that exists, or the error to answer
    /// instead (too many subscribers).
    func open(room: RoomID, after: MessageID, address: String, connection: any Channel) throws(ProtocolError) -> Response {
        let admitted = open.add(1, ordering: .relaxed).newValue
        guard admitted <= settings.maxSubscribers else {
            open.subtract(1, ordering: .relaxed)
            throw ProtocolError(.unavailable, "this gateway has its most push subscribers; try again or another gateway")
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(Self.queueDepth))
        let feed = Task { [self] in
            let outcome = await self.feed(room: room, after: after, address: address, into: continuation)
            continuation.finish()
            if outcome == .stalled {
                // What is queued would wait for a reader that does not read: close the connection,
                // dropping it; the client resumes by its last id.
                Self.stalled.increment()
                logger.info("push subscriber stalled; connection closed", metadata: ["room": "\(room)"])
                connection.close(promise: nil)
            }
        }
        continuation.onTermination = { [self] _ in
            feed.cancel()
            self.open.subtract(1, ordering: .relaxed)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store",
                HTTPField.Name("X-Accel-Buffering")!: "no",
            ],
            body: .init(asyncSequence: stream))
    }

    private enum Delivery { case queued, ended }

    /// How a feed ended: the subscriber went (or the room, or the server), or it stalled.
    private enum Outcome { case ended, stalled }

    static let stalled = Counter(label: MetricNames.pushStalled)

    /// Writes the room's news into the subscriber's queue until the subscriber
    /// goes, the queue overflows, or the room does.
    private func feed(
        room: RoomID, after: MessageID, address: String, into queue: AsyncStream<ByteBuffer>.Continuation
    ) async -> Outcome {
        var outcome = Outcome.ended
        func send(_ text: String) -> Delivery {
            switch queue.yield(ByteBuffer(string: text)) {
            case .enqueued: return .queued
            case .dropped:
                outcome = .stalled
                return .ended
            case .terminated: return .ended
            @unknown default: return .ended
            }
        }
        let signals = actions.messages.signals
        let admitCostlyRead: ChatActions.AdmitCostlyRead = { [limiter] (read) throws(ProtocolError) in
            if let refusal = limiter.admitCostlyRead(read, address: address) {
                throw ProtocolError(.rateLimited, "too many costly reads (\(read)); try again in \(refusal.retryAfterSeconds) s")
            }
        }
        // Browsers reconnect after this many milliseconds, with Last-Event-ID.
        guard send("retry: 2000\n\n") == .queued else { return outcome }
        var last = after
        var first = true
        var participantsDue = true
        while !Task.isCancelled {
            let deadline = settings.keepAlive > .zero ? ContinuousClock.now + settings.keepAlive : .now + .seconds(86_400)
            let ticket = signals.register(room, until: deadline)
            let found: [ChatMessage]
            do throws(ProtocolError) {
                found = try await actions.poll(
                    room: room, past: last, limit: settings.batch, admitCostlyRead: first ? { _ in } : admitCostlyRead)
            } catch {
                signals.cancel(ticket)
                if error.code == .unavailable {
                    try? await Task.sleep(for: .seconds(1))
                    continue
                }
                // The room is gone, or the subscriber reads history too fast: say why, then end.
                _ = send(Self.event(error.code == .noSuchChat ? "gone" : "error", data: APIJSON.text(Problem(error))))
                return outcome
            }
            first = false
            if participantsDue {
                participantsDue = false
                if let nicks = await participants.current(room, actions: actions) {
                    guard send(Self.event("participants", data: APIJSON.text(APIModels.Participants(room: room, participants: nicks)))) == .queued
                    else { signals.cancel(ticket); return outcome }
                }
            }
            if let newest = found.last {
                signals.cancel(ticket)
                let events = found.map { Self.event("message", id: $0.id, data: APIJSON.text(APIModels.Message($0))) }
                guard send(events.joined()) == .queued else { return outcome }
                last = newest.id
                continue
            }
            let news = await signals.wait(ticket)
            if news.contains(.members) { participantsDue = true }
            if news.isEmpty && !Task.isCancelled {
                guard send(": keep-alive\n\n") == .queued else { return outcome }
            }
        }
        return outcome
    }

    /// One event in the `text/event-stream` format; `data` is one line of JSON.
    static func event(_ name: String, id: MessageID? = nil, data: String) -> String {
        var text = "event: \(name)\n"
        if let id { text += "id: \(id)\n" }
        return text + "data: \(data)\n\n"
    }
}

/// A room's present participants for its push subscribers, read once per
/// change however many subscribers ask (`invalidate` on every membership event).
final class ParticipantLists: Sendable {
    private struct Entry {
        var task: Task<[String]?, Never>
        var at: ContinuousClock.Instant
    }

    private let entries = Mutex<[RoomID: Entry]>([:])
    /// A list is read again after this long even without an event (presence runs out silently).
    static let freshness = Duration.seconds(5)

    init() {}

    func current(_ room: RoomID, actions: ChatActions) async -> [String]? {
        let now = ContinuousClock.now
        let task = entries.withLock { entries in
            if let entry = entries[room], now - entry.at < Self.freshness { return entry.task }
            let task = Task { try? await actions.participants(of: room) }
            entries[room] = Entry(task: task, at: now)
            return task
        }
        return await task.value
    }

    func invalidate(_ room: RoomID) {
        _ = entries.withLock { $0.removeValue(forKey: room) }
    }

    func prune(now: ContinuousClock.Instant = .now) {
        entries.withLock { $0 = $0.filter { now - $1.at < Self.freshness } }
    }
}
