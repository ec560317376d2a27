import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Logging

/// What a chat client can do, whichever protocol it speaks: the phones' XML
/// (`LegacyHandler`) and the JSON API (`APIRoutes`) both come here, so every
/// rule, limit and read-your-writes step has one home. Reads come from the
/// read models, writes go as commands to the owning services; answers are
/// domain values, which each protocol renders its own way.
package final class ChatActions: Sendable {
    package let backend: ServiceClients
    package let sessions: SessionDirectory
    package let messages: MessageReadModel
    package let rooms: RoomMap
    package let presence: PresenceTracker
    package let lobby: LobbyLocator
    /// Long polls and push streams, counted together per gateway and per address.
    package let places: WaitingPlaces
    package let logger: Logger
    /// Lookups started beside a request (`signOfLife`), at most `BackgroundLookups.most` at once.
    private let backgroundLookups = BackgroundLookups()

    package init(
        backend: ServiceClients, sessions: SessionDirectory, messages: MessageReadModel, rooms: RoomMap,
        presence: PresenceTracker, lobby: LobbyLocator, places: WaitingPlaces, logger: Logger
    ) {
        self.backend = backend
        self.sessions = sessions
        self.messages = messages
        self.rooms = rooms
        self.presence = presence
        self.lobby = lobby
        self.places = places
        self.logger = logger
    }

    /// Longest a `messages` request may wait for a new message.
    package static let maxWait = Duration.seconds(Limits.maxWaitSeconds.upperBound)

    // MARK: Sessions

    package func start(nick: Nickname, client: ChatClient) async throws(ProtocolError) -> SessionInfo {
        try client.admit(.start)
        if sessions.bans.isBanned(nick: nick.value) { throw .banned }
        let info = try await backend.send(StartSession(nick: nick))
        sessions.remember(info)
        presence.started(info.id, atMs: WallClock.nowMs())
        return info
    }

    package func rename(_ id: SessionID, to nick: Nickname, client: ChatClient) async throws(ProtocolError)
        -> SessionInfo
    {
        try client.admit(.change(session: id))
        let session = try await live(id, client: client)
        if sessions.bans.isBanned(nick: nick.value) { throw .banned }
        let renamed = try await backend.send(RenameSession(session: session.id, nick: nick))
        sessions.remember(renamed)
        // Every gateway lists the new nick once this is answered: the memberships carry it now.
        _ = try await backend.send(RenameMemberships(session: renamed))
        return renamed
    }

    package func end(_ id: SessionID) async throws(ProtocolError) {
        let session = try await live(id)
        let ended = try await endSession(session.id)
        sessions.remember(ended)
        // No gateway lists the session once this is answered: its memberships are gone now.
        _ = try await backend.send(EndMemberships(session: session.id))
    }

    // MARK: Rooms

    package func rooms(in query: RegionQuery, client: ChatClient) async throws(ProtocolError) -> [RoomInfo] {
        try await withRooms(in: query, client: client) { $0.infos }
    }

    /// The answer to a region query lent to `body` (`LentRooms`), for an answer written as bytes.
    package func withRooms<Result>(
        in query: RegionQuery, client: ChatClient, _ body: (LentRooms) -> Result
    ) async throws(ProtocolError) -> Result {
        if rooms.cellsLookedAt(by: query) > Limits.wideRegionCells { try client.admit(.wideRegion) }
        // From memory once the index is loaded; the rooms service answers before,
        // a command and a query each, so then it costs a history token.
        if let answer = rooms.withRooms(in: query, body) { return answer }
        try client.admit(.history)
        return body(LentRooms(try await backend.send(FindRooms(query))))
    }

    /// From the index only: until it is loaded (the gateway is not ready) the answer is `unavailable`.
    package func nearest(_ query: NearbyQuery, client: ChatClient) throws(ProtocolError) -> [NearbyRoom] {
        if rooms.cellsLookedAt(by: query) > Limits.wideRegionCells { try client.admit(.wideRegion) }
        guard let found = rooms.nearest(query) else { throw .unavailable }
        return found
    }

    /// A live room: from the index, else from the rooms service (a room just
    /// made through another gateway, whose event has not come yet, or a made-up
    /// id: that read costs a history token).
    package func room(_ id: RoomID, client: ChatClient) async throws(ProtocolError) -> RoomInfo {
        if let room = rooms.room(id) { return room }
        try client.admit(.history)
        return try await backend.send(LookupRoom(room: id))
    }

    package func create(
        session id: SessionID, position: MercatorPoint, zoom: ZoomLevel, topic: RoomTopic, client: ChatClient
    ) async throws(ProtocolError) -> RoomInfo {
        try client.admit(.create(session: id))
        let session = try await live(id, client: client)
        return try await backend.send(CreateRoom(session: session.id, position: position, zoom: zoom, topic: topic))
    }

    package func join(session id: SessionID, room: RoomID, client: ChatClient) async throws(ProtocolError) {
        try client.admit(.change(session: id))
        let session = try await live(id, client: client)
        try await join(session, room)
    }

    private func join(_ session: SessionInfo, _ room: RoomID) async throws(ProtocolError) {
        _ = try await backend.send(
            JoinRoom(room: room, session: session.id, nick: session.nick, nickVersion: session.version))
    }

    package func leave(session id: SessionID, room: RoomID, client: ChatClient) async throws(ProtocolError) {
        try client.admit(.change(session: id))
        let session = try await live(id, client: client)
        _ = try await backend.send(LeaveRoom(room: room, session: session.id))
    }

    package func participants(of room: RoomID, client: ChatClient) async throws(ProtocolError) -> [String] {
        try client.admit(.participants)
        let members = try await backend.send(ListMembers(room: room))
        return PresentParticipants.nicks(
            of: members, presence: presence, sessions: sessions, timeoutMs: presence.presenceTimeoutMs,
            nowMs: WallClock.nowMs())
    }

    // MARK: Messages

    package func say(
        session id: SessionID, room: RoomID, text: MessageText, client: ChatClient
    ) async throws(ProtocolError) -> ChatMessage {
        try client.admit(.say(session: id))
        let session = try await live(id, client: client)
        return try await post(room: room, author: session.id, nick: session.nick, text: text)
    }

    /// Messages after `past` (0: the latest `limit`), oldest first. With a
    /// `wait`, an answer that would be empty waits up to that long for the
    /// room's next message (a long poll); it is answered empty after it.
    package func messages(
        room: RoomID, past: MessageID, limit: Int, session: SessionID?, wait: Duration = .zero,
        client: ChatClient
    ) async throws(ProtocolError) -> [ChatMessage] {
        if let session { _ = try await live(session, client: client) }
        // A poll (no wait) reads once: no deadline, no clock.
        guard wait > .zero else { return try await poll(room: room, past: past, limit: limit, client: client) }
        let deadline = ContinuousClock.now + min(wait, Self.maxWait)
        // A long poll holds a place as a push stream does; without one (this
        // gateway or this address holds its most) it is answered at once.
        let place = deadline > .now ? try? places.take(address: client.address).get() : nil
        defer { withExtendedLifetime(place) {} }
        while true {
            // Registered before the read: a message between the read and the wait still wakes it.
            let waits = place != nil && deadline > .now
            let ticket = waits ? messages.signals.register(room, until: deadline) : nil
            let found: [ChatMessage]
            do throws(ProtocolError) {
                found = try await poll(room: room, past: past, limit: limit, client: client)
            } catch {
                if let ticket { messages.signals.cancel(ticket) }
                throw error
            }
            guard let ticket, found.isEmpty else {
                if let ticket { messages.signals.cancel(ticket) }
                return found
            }
            _ = await messages.signals.wait(ticket)
            if Task.isCancelled { return [] }
        }
    }

    /// One read of the room's messages, from memory when this gateway holds them.
    package func poll(
        room: RoomID, past: MessageID, limit: Int, client: ChatClient
    ) async throws(ProtocolError) -> [ChatMessage] {
        try await messages.poll(
            room: room, past: past, limit: limit,
            beforeReadingThrough: { () throws(ProtocolError) in try client.admit(.history) },
            // Loading a room the index does not hold either (a made-up id,
            // or one whose creation has not reached this gateway yet) costs
            // a history read; the index is asked only then, never on a poll.
            beforeLoading: { () throws(ProtocolError) in
                if rooms.knows(room) == false { try client.admit(.history) }
            })
    }

    /// A page of a room's transcript: messages after `after` (0: from the
    /// first), oldest first, at most `limit`.
    package func transcript(
        room: RoomID, after: MessageID, limit: Int, client: ChatClient
    ) async throws(ProtocolError) -> [ChatMessage] {
        if after > 0 { return try await poll(room: room, past: after, limit: limit, client: client) }
        // From the first message: read from the messaging service (`past = 0` means the latest).
        if rooms.knows(room) == false { throw .noSuchChat }
        try client.admit(.history)
        return try await backend.send(ReadHistory(room: room, after: 0, limit: limit, skipRemoved: true)).messages
    }

    // MARK: The lobby (the add/messages dialect)

    package func lobbyPost(user: String, text: MessageText, client: ChatClient) async throws(ProtocolError) {
        try client.admit(.say(session: nil))
        // The dialect has no session: the name is all a ban can hold on to.
        if sessions.bans.isBanned(nick: user) { throw .banned }
        let room = try await lobby.room(backend)
        try await post(room: room, author: nil, nick: user, text: text)
    }

    package func lobbyMessages(past: MessageID, client: ChatClient) async throws(ProtocolError) -> [ChatMessage] {
        let room = try await lobby.room(backend)
        return try await messages.poll(
            room: room, past: past, limit: Limits.lobbyMessageLimit,
            beforeReadingThrough: { () throws(ProtocolError) in try client.admit(.history) })
    }

    // MARK: Signs of life

    /// Any request carrying the id of a live session is a sign of life (contract
    /// 3, `participants`), also where the command takes no session (`chats`,
    /// `participants`, the lobby). The answer never waits for it: a session this
    /// gateway does not hold is looked up beside the request, once (the directory
    /// then holds it, or remembers the id as unknown).
    ///
    /// An id this gateway has never met costs its client a session-lookup
    /// token, given back when it is a live session: guessing ids is limited
    /// per address (`rate_limited` once the bucket is empty), real phones
    /// meeting a new gateway are not. At most `BackgroundLookups.most` such
    /// lookups run beside requests at once; over it, the request's own
    /// lookup (if it needs the session) is the only one.
    ///
    /// A session this gateway holds but has not seen within the presence
    /// timeout is marked at the rooms service (`PresenceTracker`): the request
    /// is answered once every gateway lists it (`pendingMark`). One
    /// looked up beside the request is marked beside it too.
    package func signOfLife(_ id: SessionID?, client: inout ChatClient) throws(ProtocolError) {
        guard let id else { return }
        switch sessions.liveness(id) {
        case .live:
            sawLive(id)
            client.notedSignOfLife = id
        case .notLive: break
        case .unknownHere:
            try client.admit(.sessionLookup)
            guard backgroundLookups.begin() else { return }
            Task { [self, client] in
                defer { backgroundLookups.end() }
                if (try? await sessions.resolve(id)) != nil {
                    sawLive(id)
                    client.refund(.sessionLookup)
                }
            }
        }
    }

    /// Records a live session's sign of life; a possible return is marked at
    /// the rooms service beside the request (`PresenceTracker.seen`), and the
    /// surface waits for it before it answers (`pendingMark`).
    private func sawLive(_ id: SessionID) {
        presence.seen(id, atMs: WallClock.nowMs())
    }

    /// The mark of the request's session, if one is on its way: the surface
    /// answers once it is done, when every gateway lists the session. The mark
    /// runs beside the request's own work, so a request waits for the longer
    /// of the two, not their sum. Nil nearly always: no await then.
    package func pendingMark(of id: SessionID?) -> Task<Void, Never>? {
        guard let id else { return nil }
        return presence.runningMark(of: id)
    }

    /// The live session behind an id as this gateway knows it; the request is a
    /// sign of life. A `nick` or `end` made through another gateway reaches this
    /// directory through the session events, milliseconds later (docs/protocol.md,
    /// decisions): asking the session service on every write would put all
    /// writes through its one-at-a-time command loop.
    /// `client`: the request's; its sign of life is not noted twice (`ChatClient.notedSignOfLife`).
    package func live(_ id: SessionID, client: ChatClient? = nil) async throws(ProtocolError) -> SessionInfo {
        // Held here nearly always: then no async call.
        let session: SessionInfo
        if let held = try sessions.resolveHeld(id) { session = held } else { session = try await sessions.resolve(id) }
        if client?.notedSignOfLife != id { sawLive(id) }
        return session
    }

    // MARK: Helpers

    /// Ends a session so that a `503` means what the contract says: nothing was
    /// done. An end whose answer did not come may have been carried out, and an
    /// ended session refuses every later `end` (contract, fine print), so the
    /// phone's repeat could not succeed: the end is asked once more under the
    /// same idempotency key, which answers the first end if it happened and
    /// makes it if not (docs/protocol.md, "Repeated requests").
    /// Both asks fit in the request deadline: half of it each.
    private func endSession(_ id: SessionID) async throws(ProtocolError) -> SessionInfo {
        let key = IdempotencyKey.random()
        let halves = ServiceClients(bus: backend.bus, timeout: backend.timeout / 2)
        do throws(ProtocolError) {
            return try await halves.send(EndSession(session: id), idempotencyKey: key)
        } catch  where error.code == .unavailable {
            return try await halves.send(EndSession(session: id), idempotencyKey: key)
        }
    }

    @discardableResult
    private func post(room: RoomID, author: SessionID?, nick: String, text: MessageText) async throws(ProtocolError)
        -> ChatMessage
    {
        // A room this gateway saw removed is refused here, as its polls are: the
        // messaging service closes the room's log from the same event, but may
        // apply it later than this gateway did.
        guard !messages.knowsRemoved(room) else { throw .noSuchChat }
        let key = IdempotencyKey.random()
        // Saying joins the room. The join goes to the rooms service beside the
        // say, on the room's key, and the say is answered only once the broker
        // has it: a `participants` asked after the answer, through any gateway,
        // comes after it in the room's order (read-your-writes, docs/protocol.md).
        // The rooms service joins only to a room that exists.
        let joined: RecordDelivery? =
            if let author {
                await backend.post(JoinBySaying(room: room, session: author, nick: nick), idempotencyKey: key + "/join")
            } else { nil }
        let message = try await backend.send(
            Say(room: room, session: author, nick: nick, text: text), idempotencyKey: key)
        if let joined {
            do { try await joined.wait() } catch {
                // Stored, but not joined: the sayer would be missing from
                // `participants`. "Outcome unknown": the phone's repeat gets
                // the same message (a repeat stores nothing) and joins again.
                logger.warning("say stored, its join not delivered", metadata: ["error": "\(error)"])
                throw .unavailable
            }
        }
        // Our own pollers see it at once; the timeline ignores it if it is not next in line.
        messages.apply(message)
        return message
    }
}
