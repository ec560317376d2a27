import GeoChatBus
import GeoChatDomain
import GeoChatLegacyProtocol
import Logging
import Synchronization

/// Carries out checked legacy requests: reads from the read models, writes as
/// commands to the owning services, and answers with the contract's XML.
struct LegacyHandler: Sendable {
    let backend: ServiceClients
    let sessions: SessionDirectory
    let messages: MessageReadModel
    let rooms: RoomMap
    let presence: PresenceTracker
    let lobby: LobbyLocator
    let settings: GatewaySettings
    let logger: Logger

    /// `admitCostlyRead`: asked before a read that costs far more than a poll
    /// (`RateLimiter.CostlyRead`); throws `rate_limited` to refuse it.
    func handle(
        _ request: LegacyRequest, admitCostlyRead: (RateLimiter.CostlyRead) throws(ProtocolError) -> Void = { _ in }
    ) async throws(ProtocolError) -> String {
        switch request {
        case .chat(let command):
            return try await handle(command, admitCostlyRead: admitCostlyRead)
        case .lobbyPost(let user, let message):
            // The dialect has no session: the name is all a ban can hold on to.
            if sessions.bans.isBanned(nick: user) { throw .banned }
            let room = try await lobby.room(backend)
            try await post(room: room, author: nil, nick: user, text: message)
            return LegacyXML.success()
        case .lobbyMessages(let past):
            let room = try await lobby.room(backend)
            return LegacyXML.lobbyMessages(
                try await messages.poll(
                    room: room, past: past, limit: Limits.lobbyMessageLimit,
                    beforeReadingThrough: { () throws(ProtocolError) in try admitCostlyRead(.history) }))
        }
    }

    private func handle(
        _ command: ChatCommand, admitCostlyRead: (RateLimiter.CostlyRead) throws(ProtocolError) -> Void
    ) async throws(ProtocolError) -> String {
        switch command {
        case .start(let nick):
            if sessions.bans.isBanned(nick: nick.value) { throw .banned }
            let info = try await backend.send(StartSession(nick: nick.value))
            sessions.remember(info)
            presence.seen(info.id, atMs: WallClock.nowMs())
            return LegacyXML.sessionID(info.id)

        case .chats(let query):
            if rooms.cellsLookedAt(by: query) > Limits.wideRegionCells { try admitCostlyRead(.wideRegion) }
            // From memory once the index is loaded; the rooms service answers before.
            if let found = rooms.rooms(in: query) { return LegacyXML.rooms(found) }
            return LegacyXML.rooms(try await backend.send(FindRooms(query)))

        case .create(let id, let position, let zoom, let topic):
            let session = try await live(id)
            let room = try await backend.send(
                CreateRoom(session: session.id, position: position, zoom: zoom, topic: topic))
            return LegacyXML.room(room)

        case .join(let id, let room):
            let session = try await live(id)
            _ = try await backend.send(
                JoinRoom(room: room, session: session.id, nick: session.nick, nickVersion: session.version))
            return LegacyXML.success()

        case .leave(let id, let room):
            let session = try await live(id)
            _ = try await backend.send(LeaveRoom(room: room, session: session.id))
            return LegacyXML.success()

        case .say(let id, let room, let text):
            let session = try await live(id)
            // Saying joins the room. The rooms service would learn it from the
            // message event, later; asked side by side with the say, the sayer is
            // a member before the say is answered (read-your-writes, docs/architecture.md).
            async let joined = attempt { () async throws(ProtocolError) -> Done in
                try await backend.send(
                    JoinRoom(room: room, session: session.id, nick: session.nick, nickVersion: session.version))
            }
            let stored: ChatMessage
            do throws(ProtocolError) {
                stored = try await post(room: room, author: session.id, nick: session.nick, text: text)
            } catch {
                _ = await joined
                throw error
            }
            if case .failure(let error) = await joined {
                // The message is stored: the say succeeded. The message event makes the membership soon.
                logger.warning("say stored, membership left to the message event", metadata: ["error": "\(error.code)"])
            }
            return LegacyXML.success(id: stored.id)

        case .messages(let room, let past, let limit, let id):
            if let id { _ = try await live(id) }
            return LegacyXML.messages(
                room: room,
                try await messages.poll(
                    room: room, past: past, limit: limit,
                    beforeReadingThrough: { () throws(ProtocolError) in try admitCostlyRead(.history) },
                    // Loading a room the index does not hold either (a made-up id,
                    // or one whose creation has not reached this gateway yet) costs
                    // a history read; the index is asked only then, never on a poll.
                    beforeLoading: { () throws(ProtocolError) in
                        if rooms.knows(room) == false { try admitCostlyRead(.history) }
                    }))

        case .participants(let room):
            let members = try await backend.send(ListMembers(room: room))
            let nicks = PresentParticipants.nicks(
                of: members, presence: presence, sessions: sessions, timeoutMs: settings.presenceTimeoutMs,
                nowMs: WallClock.nowMs())
            return LegacyXML.participants(room: room, nicks: nicks)

        case .nick(let id, let nick):
            let session = try await live(id)
            if sessions.bans.isBanned(nick: nick.value) { throw .banned }
            let renamed = try await backend.send(RenameSession(session: session.id, nick: nick.value))
            sessions.remember(renamed)
            // Every gateway lists the new nick once this is answered: the memberships carry it now.
            _ = try await backend.send(RenameMemberships(session: renamed))
            return LegacyXML.success()

        case .end(let id):
            let session = try await live(id)
            let ended = try await endSession(session.id)
            sessions.remember(ended)
            // No gateway lists the session once this is answered: its memberships are gone now.
            _ = try await backend.send(EndMemberships(session: session.id))
            return LegacyXML.success()
        }
    }

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
        } catch where error.code == .unavailable {
            return try await halves.send(EndSession(session: id), idempotencyKey: key)
        }
    }

    /// The live session behind an id as this gateway knows it; the request is a
    /// sign of life. A `nick` or `end` made through another gateway reaches this
    /// directory through the session events, milliseconds later (docs/protocol.md,
    /// decisions): asking the session service on every write would put all
    /// writes through its one-at-a-time command loop.
    private func live(_ id: SessionID) async throws(ProtocolError) -> SessionInfo {
        let session = try await sessions.resolve(id)
        presence.seen(id, atMs: WallClock.nowMs())
        return session
    }

    /// Any request carrying the id of a live session is a sign of life (contract
    /// 3, `participants`), also where the command takes no session (`chats`,
    /// `participants`, the lobby). The answer never waits for it: a session this
    /// gateway does not hold is looked up beside the request, once (the directory
    /// then holds it, or remembers the id as unknown).
    func signOfLife(_ id: SessionID?) {
        guard let id else { return }
        switch sessions.liveness(id) {
        case .live: presence.seen(id, atMs: WallClock.nowMs())
        case .notLive: break
        case .unknownHere:
            Task { [sessions, presence] in
                if (try? await sessions.resolve(id)) != nil { presence.seen(id, atMs: WallClock.nowMs()) }
            }
        }
    }

    private func attempt<Value: Sendable>(
        _ body: () async throws(ProtocolError) -> Value
    ) async -> Result<Value, ProtocolError> {
        do throws(ProtocolError) { return .success(try await body()) } catch { return .failure(error) }
    }

    @discardableResult
    private func post(room: RoomID, author: SessionID?, nick: String, text: String) async throws(ProtocolError) -> ChatMessage {
        let message = try await backend.send(Say(room: room, session: author, nick: nick, text: text))
        // Our own pollers see it at once; the timeline ignores it if it is not next in line.
        messages.apply(message)
        return message
    }
}

/// The lobby room's id, asked of the rooms service once.
final class LobbyLocator: Sendable {
    private let known = Mutex<RoomID?>(nil)

    init() {}

    func room(_ backend: ServiceClients) async throws(ProtocolError) -> RoomID {
        if let id = known.withLock({ $0 }) { return id }
        let lobby = try await backend.send(LocateLobby())
        known.withLock { $0 = lobby.id }
        return lobby.id
    }
}
