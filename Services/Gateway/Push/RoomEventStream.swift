import GatewayCore
import GeoChatDomain
import GeoChatMetrics
import HTTPTypes
import Hummingbird
import Logging
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
/// A stream is its connection's response body and reads the shared timeline
/// only when the connection has taken its last write: a subscriber holds no
/// queue, at most one write of `push.batch` messages plus what the connection
/// buffers: NIO's buffer (the writer waits above its high watermark) and the
/// kernel's, fixed at `push.sendBufferBytes`. A write the
/// connection has not taken for `push.writeTimeout` (the subscriber stopped
/// reading) gets its connection closed by one sweep (`PendingWrites`), and the
/// client resumes by its last id. Streams and long polls share the gateway's
/// `WaitingPlaces` (per gateway and per client address), and a stream ends
/// after `push.maxStreamDuration` whatever it does.
///
/// Memory: a Swift task's stack never gives back what its deepest call took,
/// and a stream's connection task lives as long as the stream. So that task
/// only waits (for news, or for the connection to take a write); what goes
/// deeper, the read and the encoding (`next`), and the checks before the
/// stream opens (`APIRoutes`), run in short tasks of their own. An open
/// stream then costs about what a bare Hummingbird stream does
/// (`deploy/bench-push.sh` measures both; docs/benchmarks.md).
final class RoomEventStream: Sendable {
    private let actions: ChatActions
    private let participants: ParticipantLists
    private let settings: PushSettings
    private let logger: Logger
    private let open = Atomic<Int>(0)
    let pendingWrites = PendingWrites()

    init(actions: ChatActions, participants: ParticipantLists, settings: PushSettings, logger: Logger) {
        self.actions = actions
        self.participants = participants
        self.settings = settings
        self.logger = logger
    }

    var subscribers: Int { open.load(ordering: .relaxed) }

    /// Where a stream starts: after `Last-Event-ID`, else `?after=`, else the
    /// room's latest `push.batch` messages first.
    static func resumePoint(_ request: Request, _ parameters: APIParameters) throws(ProtocolError) -> MessageID {
        if let raw = request.headers[lastEventID] {
            guard let id = Int64(raw), id >= 0 else { throw .bad("Last-Event-ID", "is not a message id (0 or more)") }
            return MessageID(id)
        }
        return try parameters.messageID("after")
    }

    static let lastEventID = HTTPField.Name("Last-Event-ID")!

    /// A subscriber's place among the `WaitingPlaces`, given back when its
    /// response is done with: written to the end, cut off, or never written.
    /// It knows the ticket its stream waits on, so that a connection that
    /// closes wakes the stream at once rather than at its next keep-alive.
    private final class Place: Sendable {
        let stream: RoomEventStream
        private let place: WaitingPlaces.Place
        private let waiting = Mutex<(ticket: RoomSignals.Ticket?, closed: Bool)>((nil, false))

        init(_ stream: RoomEventStream, _ place: WaitingPlaces.Place) {
            self.stream = stream
            self.place = place
            stream.open.add(1, ordering: .relaxed)
        }
        deinit { stream.open.subtract(1, ordering: .relaxed) }

        /// Notes the ticket the stream is about to wait on; false (and the
        /// ticket given back) if the connection has closed.
        func willWait(on ticket: RoomSignals.Ticket) -> Bool {
            let open = waiting.withLock { waiting in
                waiting.ticket = ticket
                return !waiting.closed
            }
            if !open { stream.actions.messages.signals.cancel(ticket) }
            return open
        }

        var connectionClosed: Bool { waiting.withLock { $0.closed } }

        func closeConnection() {
            let ticket = waiting.withLock { waiting in
                waiting.closed = true
                return waiting.ticket
            }
            if let ticket { stream.actions.messages.signals.cancel(ticket) }
        }
    }

    /// The stream's response for a room that exists, or the error to answer
    /// instead (too many waiting clients on this gateway, or from this address).
    func open(room: RoomID, after: MessageID, client: ChatClient, connection: any Channel) throws(ProtocolError)
        -> Response
    {
        let address = client.address
        let place: Place
        switch actions.places.take(address: address) {
        case .success(let taken): place = Place(self, taken)
        case .failure(.gatewayFull):
            throw ProtocolError(
                .unavailable, "this gateway has its most push subscribers; try again or another gateway")
        case .failure(.addressFull):
            throw ProtocolError(
                .rateLimited,
                "this address has \(actions.places.perAddress) streams and long polls open; close one first")
        }
        // A client that closes its side has gone (an SSE client sends nothing after its
        // request): the connection closes, rather than waiting for a write to fail, and
        // the close wakes the stream, which ends and gives its place back.
        connection.setOption(ChannelOptions.allowRemoteHalfClosure, value: false)
            .whenFailure { [logger] error in
                logger.debug("push half-closure not turned off", metadata: ["error": "\(error)"])
            }
        connection.closeFuture.whenComplete { [weak place] _ in place?.closeConnection() }
        if settings.sendBufferBytes > 0 {
            // A fixed kernel buffer: a subscriber that stops reading holds at most this much there,
            // and its stall shows (PendingWrites) once this and NIO's buffer are full.
            connection.setOption(
                ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(settings.sendBufferBytes)
            )
            .whenFailure { [logger] error in logger.debug("push send buffer not set", metadata: ["error": "\(error)"]) }
        }
        // A resumed stream's client may show messages removed while it was away: told at once.
        let start = Position(
            room: room, client: client, last: after, endsAt: ContinuousClock.now + settings.maxStreamDuration,
            removals: after > 0 ? .resuming : nil)
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store",
                HTTPField.Name("X-Accel-Buffering")!: "no",
            ],
            body: ResponseBody { [self] writer in
                try await run(from: start, place: place, connection: connection, writing: &writer)
            })
    }

    /// Where a subscriber stands; what `next` reads from and moves on.
    struct Position: Sendable {
        let room: RoomID
        /// Catching up through PostgreSQL costs the subscriber's history tokens.
        let client: ChatClient
        var last: MessageID
        /// The stream ends then (`push.maxStreamDuration`); the client resumes by its last id.
        let endsAt: ContinuousClock.Instant
        var participantsDue = true
        /// The room's membership changes when its participants were last read (`ParticipantLists.changeCount`).
        var membersSeen = -1
        /// Where the subscriber stands in the room's removals (nil until the room is first read here).
        var removals: RemovalCursor?
    }

    /// What a subscriber does next.
    enum Step: Sendable {
        /// Write this, then ask again.
        case write(ByteBuffer)
        /// Nothing new: wait on this ticket, then ask again; a keep-alive
        /// comment if it ran out without news.
        case wait(RoomSignals.Ticket, keepAlive: Bool)
        /// Write this (the room is gone, or an error), then end the response.
        case finish(ByteBuffer)
    }

    /// The connection task's part: waits and writes, nothing deeper. One
    /// write and one wait of each kind, so that its frame stays small.
    private func run(
        from start: Position, place: Place, connection: any Channel, writing writer: inout any ResponseBodyWriter
    ) async throws {
        var position = start
        var pending: ByteBuffer? = Self.retry
        var finished = false
        while true {
            if let buffer = pending {
                pending = nil
                try await write(buffer, connection, &writer)
            }
            if finished || Task.isCancelled { break }
            let (step, moved) = await nextInItsOwnTask(position)
            position = moved
            switch step {
            case .write(let buffer):
                pending = buffer
            case .wait(let ticket, let keepAlive):
                let news = try await waitForNews(ticket, place)
                if news.contains(.members) { position.participantsDue = true }
                if news.isEmpty && keepAlive { pending = Self.keepAlive }
            case .finish(let buffer):
                pending = buffer
                finished = true
            }
        }
        try await writer.finish(nil)
    }

    /// Browsers reconnect after this many milliseconds, with Last-Event-ID.
    private static let retry = ByteBuffer(string: "retry: 2000\n\n")
    /// Keeps proxies from closing a quiet stream, and finds clients that vanished.
    private static let keepAlive = ByteBuffer(string: ": keep-alive\n\n")
    /// The last words of a stream that reached `push.maxStreamDuration`.
    private static let ends = ByteBuffer(string: ": this stream ends; resume with Last-Event-ID\n\n")

    /// Not inlined into `run`, whose frame each open stream keeps (see "Memory").
    /// Throws if the connection closed before or during the wait.
    @inline(never)
    private func waitForNews(_ ticket: RoomSignals.Ticket, _ place: Place) async throws -> RoomSignals.News {
        guard place.willWait(on: ticket) else { throw ChannelError.ioOnClosedChannel }
        let news = await actions.messages.signals.wait(ticket)
        if place.connectionClosed { throw ChannelError.ioOnClosedChannel }
        return news
    }

    /// Writes `buffer`, watched by `pendingWrites`; throws once the connection
    /// is gone, or was cut off because it stopped taking writes.
    private func write(_ buffer: ByteBuffer, _ connection: any Channel, _ writer: inout any ResponseBodyWriter)
        async throws
    {
        let watch = pendingWrites.begin(connection)
        do {
            try await writer.write(buffer)
        } catch {
            try ended(watch, error)
        }
        try ended(watch, nil)
    }

    /// A watched write ended (with `error`, if it failed): throws if the stream must end.
    @inline(never)
    private func ended(_ watch: PendingWrites.Watch, _ error: (any Error)?) throws {
        guard pendingWrites.end(watch) else {
            Self.stalled.increment()
            logger.info(
                "push subscriber stalled; connection closed", metadata: ["write timeout": "\(settings.writeTimeout)"])
            throw ChannelError.ioOnClosedChannel
        }
        if let error { throw error }
    }

    /// `next` in a short task: its reads and encoding go deeper than the
    /// connection task should (see "Memory" above).
    @inline(never)
    private func nextInItsOwnTask(_ position: Position) async -> (Step, Position) {
        await withCheckedContinuation { continuation in
            Task { continuation.resume(returning: await next(position)) }
        }
    }

    static let stalled = Counter(label: MetricNames.pushStalled)

    /// Closes the connections of subscribers whose write has waited longer
    /// than `push.writeTimeout` (every second until cancelled).
    func closeStalledWrites(every interval: Duration = .seconds(1)) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            pendingWrites.closeStalled(after: settings.writeTimeout)
        }
    }

    /// The subscriber's next step from where it stands: the participants when
    /// due, else the messages after its last id, or a ticket to wait on. The
    /// ticket is taken before the read, so news between the two is not lost.
    func next(_ start: Position) async -> (Step, Position) {
        var position = start
        if ContinuousClock.now >= position.endsAt { return (.finish(Self.ends), position) }
        let changes = participants.changeCount(position.room)
        if changes != position.membersSeen {
            // A change rung while this subscriber was writing reached no ticket.
            position.participantsDue = true
            position.membersSeen = changes
        }
        if position.participantsDue {
            position.participantsDue = false
            guard let nicks = await participants.current(position.room, actions: actions) else {
                // Not read (the rooms service busy or away): due still, asked again in a second
                // or at news, so a change of who is here is not lost until the next one.
                position.participantsDue = true
                let retry = actions.messages.signals.register(position.room, until: .now + .seconds(1))
                return (.wait(retry, keepAlive: false), position)
            }
            let event = Self.event(
                "participants", data: APIJSON.text(APIModels.Participants(room: position.room, participants: nicks)))
            return (.write(ByteBuffer(string: event)), position)
        }
        let signals = actions.messages.signals
        let deadline = min(
            position.endsAt,
            settings.keepAlive > .zero ? ContinuousClock.now + settings.keepAlive : .now + .seconds(86_400))
        let ticket = signals.register(position.room, until: deadline)
        // Removals of messages it was sent (ids up to its last): the client takes them off its screen.
        if let (ids, next) = actions.messages.removals(in: position.room, since: position.removals) {
            position.removals = next
            let sent = ids.filter { $0 <= position.last }
            if !sent.isEmpty {
                signals.cancel(ticket)
                let event = Self.event(
                    "removed",
                    data: APIJSON.text(APIModels.Removed(room: position.room, ids: Array(Set(sent)).sorted())))
                return (.write(ByteBuffer(string: event)), position)
            }
        }
        let found: [ChatMessage]
        do throws(ProtocolError) {
            // Every read that reaches PostgreSQL costs a history token, the first
            // one too (`after=1` on an old room reads a batch of old rows).
            found = try await actions.poll(
                room: position.room, past: position.last, limit: settings.batch, client: position.client)
        } catch {
            signals.cancel(ticket)
            if error.code == .unavailable {
                // The room's owner is away: ask again in a second, or at news.
                return (.wait(signals.register(position.room, until: .now + .seconds(1)), keepAlive: false), position)
            }
            // The room is gone, or the subscriber reads history too fast: say why, then end.
            let event = Self.event(error.code == .noSuchChat ? "gone" : "error", data: APIJSON.text(Problem(error)))
            return (.finish(ByteBuffer(string: event)), position)
        }
        guard let newest = found.last else { return (.wait(ticket, keepAlive: true), position) }
        signals.cancel(ticket)
        position.last = newest.id
        let events = found.map { Self.event("message", id: $0.id, data: APIJSON.text(APIModels.Message($0))) }
        return (.write(ByteBuffer(string: events.joined())), position)
    }

    /// One event in the `text/event-stream` format; `data` is one line of JSON.
    static func event(_ name: String, id: MessageID? = nil, data: String) -> String {
        var text = "event: \(name)\n"
        if let id { text += "id: \(id)\n" }
        return text + "data: \(data)\n\n"
    }
}
