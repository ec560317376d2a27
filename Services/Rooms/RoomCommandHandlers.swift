import GeoChatBus
import GeoChatDomain
import Logging

/// The rooms service's command handlers: change the tables and stage the
/// event in one transaction, hand the event to the broker, answer. As in the
/// session service, a refused event is the outbox relay's to publish, not the
/// client's failure.
struct RoomCommandHandlers: Sendable {
    let store: any RoomStore
    let outbox: OutboxRelay<StagedEvent>
    /// The gateways' sightings, which `participants` reads beside the memberships.
    var presence = PresenceView()
    /// Checks the seals of the removals only operators' tools may send.
    let operatorSeal: OperatorSeal
    let logger: Logger

    var handlers: CommandHandlers {
        var handlers = CommandHandlers(topic: Topics.roomsCommands)
        let creations = RoomCreations(store: store)
        handlers.on(CreateRoom.self) { command, context in try await create(command, context, creations) }
        handlers.on(FindRooms.self) { command, _ in try await store.region(command.query) }
        handlers.on(LookupRoom.self) { command, _ in
            guard let room = try await store.find(command.room) else { throw ProtocolError.noSuchChat }
            return room
        }
        handlers.on(ListRoomsPage.self) { command, _ in
            try await store.page(
                after: command.after, before: command.before, changes: command.changes,
                limit: min(max(command.limit, 1), ListRoomsPage.maxLimit))
        }
        handlers.on(ListRemovedRooms.self) { command, _ in
            try await store.removedRooms(
                since: WallClock.date(command.sinceMs), after: command.after,
                limit: min(max(command.limit, 1), ListRemovedRooms.maxLimit))
        }
        handlers.on(TallyRooms.self) { _, _ in try await store.tally() }
        handlers.on(HighestRoomID.self) { _, _ in try await store.highestID() }
        handlers.on(LocateLobby.self) { _, _ in
            guard let room = try await store.lobby() else { throw ProtocolError.noSuchChat }
            return room
        }
        handlers.on(JoinRoom.self) { command, _ in try await join(command) }
        let sayers = SayerJoins(store: store, outbox: outbox, logger: logger)
        handlers.on(JoinBySaying.self) { command, _ in
            // Answers nothing (posted one way); a `joined` event only for a new member.
            try await sayers.join(Sayer(room: command.room, session: command.session, nick: command.nick))
            return Done()
        }
        handlers.on(LeaveRoom.self) { command, _ in try await leave(command) }
        handlers.on(RenameMemberships.self) { command, _ in
            try await store.renameMember(
                command.session.id, nick: command.session.nick, version: command.session.version)
            return Done()
        }
        handlers.on(EndMemberships.self) { command, _ in
            try await store.removeMemberships(of: command.session)
            return Done()
        }
        handlers.on(ListMembers.self) { command, _ in
            guard let members = try await store.members(command.room) else { throw ProtocolError.noSuchChat }
            return presence.withSightings(members)
        }
        handlers.on(MarkPresent.self) { command, _ in
            // Never later than now: a gateway's clock ahead of ours must not keep a member listed longer.
            let seenAtMs = min(command.seenAtMs, WallClock.nowMs())
            // A session another gateway published moments ago is present for every instance already
            // (each reads every batch), for most of the timeout: no row to write. Only a real return writes.
            if let sighted = presence.lastSeenMs(command.session), sighted >= seenAtMs - command.presenceTimeoutMs / 4 {
                return Done()
            }
            try await store.markPresent(command.session, at: WallClock.date(seenAtMs))
            return Done()
        }
        handlers.on(SelectIdleRooms.self) { command, _ in
            let page = min(max(command.limit, 1), Limits.maxRoomBatch)
            return try await store.idleRooms(
                after: command.after, before: WallClock.date(command.idleBeforeMs), limit: page)
        }
        handlers.on(RemoveIdleRooms.self, sealedWith: operatorSeal) { command, _ in try await removeIdle(command) }
        handlers.on(ListRoomsForAdmin.self) { command, _ in
            let text = command.search ?? ""
            guard text.count <= 100 else { throw ProtocolError.bad("q", "is longer than 100 characters") }
            return try await store.adminList(search: text, limit: min(max(command.limit, 1), 1000))
        }
        handlers.on(RemoveRoom.self, sealedWith: operatorSeal) { command, _ in try await remove(command) }
        handlers.on(ChangeRoom.self, sealedWith: operatorSeal) { command, _ in try await change(command) }
        return handlers
    }

    func create(_ command: CreateRoom, _ context: CommandContext, _ creations: RoomCreations) async throws -> RoomInfo {
        let created = try await creations.create(
            NewRoom(
                session: command.session, position: command.position, zoom: command.zoom, topic: command.topic.value))
        // A repeat has no event: the first one's is published or in the outbox.
        if let answers = context.eventAnswers, let answering = created.event?.answering(answers) {
            // The `created` event is the answer: the gateway that asked has the
            // room in its index before its client has the id.
            context.answeredBy(outbox.announce(answering))
        } else {
            await outbox.announceAndWait(created.event)
        }
        if created.changed {
            logger.info(
                "room created",
                metadata: [
                    "room": "\(created.value.id)", "session": "\(command.session)", "z": "\(command.zoom.value)",
                ])
        }
        return created.value
    }

    func join(_ command: JoinRoom) async throws -> Done {
        let joined = try await store.join(
            command.room, session: command.session, nick: command.nick, nickVersion: command.nickVersion, announce: true
        )
        guard joined.value else { throw ProtocolError.noSuchChat }
        // Not awaited: the membership is committed, which is what `participants`
        // reads; the event only moves the room's last visit in gateways' indexes.
        // Waiting for the broker was most of a join.
        outbox.announce(joined.event)
        return Done()
    }

    func leave(_ command: LeaveRoom) async throws -> Done {
        let left = try await store.leave(command.room, session: command.session)
        guard left.value else { throw ProtocolError.noSuchChat }
        await outbox.announceAndWait(left.event)
        return Done()
    }

    func removeIdle(_ command: RemoveIdleRooms) async throws -> [RoomID] {
        guard command.rooms.count <= Limits.maxRoomBatch else {
            throw ProtocolError.bad("rooms", "holds more than \(Limits.maxRoomBatch) ids")
        }
        guard (1...100).contains(command.reason.count) else {
            throw ProtocolError.bad("reason", "must be 1 to 100 characters")
        }
        let removed = try await store.removeIdleRooms(
            command.rooms, before: WallClock.date(command.idleBeforeMs), reason: command.reason)
        await outbox.announceAndWait(removed.event)
        let outcome = removed.value
        logger.info(
            "rooms removed",
            metadata: [
                "count": "\(outcome.new.count)", "asked": "\(command.rooms.count)", "reason": "\(command.reason)",
            ])
        return outcome.all
    }

    func remove(_ command: RemoveRoom) async throws -> Done {
        let removal = try await store.removeNow(command.room, reason: "admin")
        switch removal.value {
        case .lobby:
            throw ProtocolError(.badParam, "the lobby room cannot be removed")
        case .noSuchRoom:
            throw ProtocolError.noSuchChat
        case .removed:
            await outbox.announceAndWait(removal.event)
            logger.info(
                "room removed", metadata: ["room": "\(command.room)", "reason": "admin", "admin": "\(command.by)"])
            return Done()
        }
    }

    func change(_ command: ChangeRoom) async throws -> RoomInfo {
        let change = try await store.change(
            command.room, topic: command.topic?.value, position: command.position, zoom: command.zoom)
        switch change.value {
        case .lobby:
            throw ProtocolError(.badParam, "the lobby room cannot be changed")
        case .noSuchRoom:
            throw ProtocolError.noSuchChat
        case .changed(let room):
            await outbox.announceAndWait(change.event)
            logger.info("room changed", metadata: ["room": "\(command.room)", "admin": "\(command.by)"])
            return room
        }
    }
}
