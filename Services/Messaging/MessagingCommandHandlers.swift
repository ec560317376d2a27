import GeoChatBus
import GeoChatDomain
import GeoChatMetrics
import Logging
import Metrics

/// The messaging service's command handlers. A `say` is answered only after
/// its message and its outbox row are committed in PostgreSQL; its event is
/// handed to the producer right after the commit and is the answer
/// (`EventEnvelope.answers`), published by the outbox relay if the broker did
/// not take it (`OutboxRelay`; a reply record answers then).
struct MessagingCommandHandlers: Sendable {
    let store: any MessageStore
    /// Asks the rooms service whether a room exists before its log is opened here.
    let bus: any CommandBus
    let outbox: OutboxRelay<MessageStored>
    /// Checks the seals of expiry's removals.
    let operatorSeal: OperatorSeal
    let logger: Logger
    /// Says share transactions: one commit for the says that arrived meanwhile.
    let commits: GroupCommit

    init(
        store: any MessageStore, bus: any CommandBus, outbox: OutboxRelay<MessageStored>, operatorSeal: OperatorSeal,
        logger: Logger
    ) {
        self.store = store
        self.bus = bus
        self.outbox = outbox
        self.operatorSeal = operatorSeal
        self.logger = logger
        self.commits = GroupCommit(store: store)
    }

    private static let repeats = LabeledFamily(counter: MetricNames.sayRepeats, label: "by")

    /// The most rooms one count may ask about (an admin page of rooms).
    static let maxCountedRooms = 1000

    var handlers: CommandHandlers {
        var handlers = CommandHandlers(topic: Topics.messagingCommands)
        handlers.on(Say.self) { try await say($0, $1) }
        handlers.on(ReadHistory.self) { try await history($0, $1) }
        handlers.on(ReadHeads.self) { command, _ in
            guard command.rooms.count <= Limits.maxRoomBatch else {
                throw ProtocolError.bad("rooms", "holds more than \(Limits.maxRoomBatch) ids")
            }
            return try await store.heads(command.rooms)
        }
        handlers.on(RemoveRoomMessages.self, sealedWith: operatorSeal) { command, _ in
            guard command.rooms.count <= Limits.maxRoomBatch else {
                throw ProtocolError.bad("rooms", "holds more than \(Limits.maxRoomBatch) ids")
            }
            let deleted = try await store.remove(rooms: command.rooms)
            logger.info(
                "room messages removed", metadata: ["rooms": "\(command.rooms.count)", "messages": "\(deleted)"])
            return Done()
        }
        handlers.on(RemoveMessages.self, sealedWith: operatorSeal) { try await removeMessages($0, $1) }
        handlers.on(CountMessages.self) { command, _ in
            guard command.rooms.count <= Self.maxCountedRooms else {
                throw ProtocolError.bad("rooms", "holds more than \(Self.maxCountedRooms) ids")
            }
            return try await store.messageCounts(command.rooms)
        }
        return handlers
    }

    func say(_ command: Say, _ context: CommandContext) async throws -> ChatMessage {
        let say = NewMessage(
            room: command.room, nick: command.nick, text: command.text.value, author: command.session,
            key: context.idempotencyKey,
            commitBy: context.deadline.forCommit)
        let append = { try await commits.append(say) }
        do {
            // The common case: the room's log is open here.
            var appended = try await append()
            if appended == nil {
                guard case .open = try await openLog(command.room, context) else { throw ProtocolError.noSuchChat }
                appended = try await append()
            }
            switch appended {
            case .stored(let message)?:
                // The event is the answer where the requester reads it anyway (a gateway).
                let event = MessageStored(message: message, author: command.session, answers: context.eventAnswers)
                let delivery = outbox.announce(event)
                if event.answers != nil { context.answeredBy(delivery) }
                logger.debug("message stored", metadata: ["room": "\(command.room)", "id": "\(message.id)"])
                return message
            case .repeated(let earlier, let author)?:
                // A phone's repeat (after a 503 or a cut connection: a new request,
                // so a new key): the first message is the answer. Announced again in
                // case the first attempt's instance died before publishing.
                Self.repeats["repeat"].increment()
                outbox.announce(MessageStored(message: earlier, author: author))
                return earlier
            case nil:
                throw ProtocolError.noSuchChat
            }
        } catch is DuplicateIdempotencyKey {
            // A retry (gateway, or a redelivery during a rebalance, maybe on
            // another instance): answer as the first time, and announce again in
            // case the first attempt died between commit and publish.
            guard let (earlier, author) = try await store.stored(key: context.idempotencyKey) else {
                throw ProtocolError.unavailable
            }
            Self.repeats["key"].increment()
            outbox.announce(MessageStored(message: earlier, author: author))
            return earlier
        }
    }

    func history(_ command: ReadHistory, _ context: CommandContext) async throws -> MessageHistory {
        // The count first: a removal between the two reads makes it low (one needless reload of the
        // gateway's timeline), never high (a removal missed for good).
        guard case .open(let head, let removed) = try await openLog(command.room, context) else {
            throw ProtocolError.noSuchChat
        }
        let messages = try await store.history(
            room: command.room, head: head, after: command.after,
            limit: min(max(command.limit, 1), Limits.maxMessageLimit), skipRemoved: command.skipRemoved ?? false)
        return MessageHistory(room: command.room, head: head, messages: messages, removed: removed)
    }

    /// An operator's removal: the tombstones are committed with their outbox
    /// rows, then announced on the message events, one record a room (a gateway
    /// replaces what it holds of them), so a removal reaches every gateway as a say does.
    func removeMessages(_ command: RemoveMessages, _ context: CommandContext) async throws -> RemovedMessages {
        guard (1...RemoveMessages.maxLimit).contains(command.limit) else {
            throw ProtocolError.bad("limit", "is not between 1 and \(RemoveMessages.maxLimit)")
        }
        // The message named is there (removed or not), or the request is an error;
        // removed already is no change (a retry finds it so).
        let named: MessageKey? =
            switch command.selection {
            case .message(let room, let id): MessageKey(room: room, id: id)
            case .bySenderOf(let message, _, _): message
            case .bySession: nil
            }
        if let named {
            guard case .open(let head, _) = try await store.state(of: named.room), named.id >= 1, named.id <= head
            else { throw ProtocolError(.noSuchChat, "no message \(named.id) in room \(named.room)") }
        }
        let tombstones = try await store.remove(command.selection, limit: command.limit)
        // Where each room's shown messages start now: a gateway holding a cleared room answers it from
        // memory instead of reading PostgreSQL to learn nothing is left. Without it (a failed read,
        // the relay's re-announcements) gateways read once, as before.
        let shownFrom = (try? await store.shownFrom(Array(Set(tombstones.map(\.room))))) ?? [:]
        // One record a room (`MessagesRemoved`), not one a message: a sender's 500 messages cost the
        // broker and every gateway one event. Each tombstone keeps its outbox row until it is out.
        for (room, removed) in Dictionary(grouping: tombstones, by: \.room) {
            let entries = removed.map { MessageStored(message: $0, author: nil, shownFrom: shownFrom[room]) }
            outbox.announce(
                MessagesRemoved(room: room, ids: removed.map(\.id), shownFrom: shownFrom[room]), covering: entries)
        }
        logger.info(
            "messages removed",
            metadata: [
                "selection": "\(command.selection)", "removed": "\(tombstones.count)", "by": "\(command.by)",
            ])
        var more = tombstones.count == command.limit
        if case .message = command.selection { more = false }
        return RemovedMessages(removed: tombstones.map { MessageKey(room: $0.room, id: $0.id) }, more: more)
    }

    /// The room's log, opened on first use after the rooms service confirmed the
    /// room exists (the `created` event usually opened it already).
    private func openLog(_ room: RoomID, _ context: CommandContext) async throws -> RoomLogState {
        let state = try await store.state(of: room)
        guard state == .unknown else { return state }
        let deadline = context.deadline.forNestedRequest
        guard !deadline.hasPassed() else { throw ProtocolError.unavailable }
        do {
            _ = try await bus.send(
                LookupRoom(room: room), idempotencyKey: context.idempotencyKey + "/lookup", deadline: deadline)
        } catch .refused(let error) {
            throw error
        } catch {
            // Nothing was stored yet: the say may be retried as new.
            throw ProtocolError.unavailable
        }
        try await store.open(room)
        return try await store.state(of: room)
    }
}
