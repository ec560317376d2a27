import GeoChatDomain
import GeoChatKafka
import GeoChatRuntime
import Logging

/// Runs messaging commands. A `say` is answered only after its message is
/// committed in PostgreSQL and published for every gateway.
struct MessagingCommands: Sendable {
    let log: MessageLog
    let rooms: RequestClient
    let events: EventPublisher
    let unpublished: UnpublishedMessages
    let logger: Logger

    func handle(_ envelope: RequestEnvelope<MessagingCommand>) async -> Result<ReplyBody, ProtocolError> {
        await answer(envelope, logger: logger) {
            switch envelope.command {
            case .say(let room, let author, let nick, let rawText):
                let text = try ChatText.validate(rawText, length: Limits.messageLength).get(field: "msg")
                let append = {
                    try await log.append(
                        room: room, nick: nick, text: text, author: author, key: envelope.idempotencyKey,
                        commitByMs: envelope.deadlineMs - Self.commitMarginMs)
                }
                do {
                    // The common case costs one statement: the room's log is open here.
                    var appended = try await append()
                    if appended == nil {
                        guard case .open = try await openLog(room, envelope: envelope) else { throw ProtocolError.noSuchChat }
                        appended = try await append()
                    }
                    guard let message = appended else { throw ProtocolError.noSuchChat }
                    await publishOrQueue(message, author: author)
                    logger.debug("message stored", metadata: ["room": "\(room)", "id": "\(message.id)"])
                    return .posted(message)
                } catch where MessageLog.isDuplicateKey(error) {
                    // A retry (client, gateway, or a redelivery during a rebalance, maybe
                    // on another instance): answer as the first time, and publish again in
                    // case the first attempt died between commit and publish.
                    guard let (earlier, earlierAuthor) = try await log.stored(key: envelope.idempotencyKey) else { throw error }
                    await publishOrQueue(earlier, author: earlierAuthor)
                    return .posted(earlier)
                }

            case .history(let room, let after, let limit):
                guard case .open(let head) = try await openLog(room, envelope: envelope) else {
                    throw ProtocolError.noSuchChat
                }
                let messages = try await log.history(
                    room: room, head: head, after: after, limit: min(max(limit, 1), Limits.maxMessageLimit))
                return .history(MessageHistory(room: room, head: head, messages: messages))

            case .removeRooms(let rooms):
                guard rooms.count <= Limits.maxRoomBatch else {
                    throw ProtocolError.bad("rooms", "holds more than \(Limits.maxRoomBatch) ids")
                }
                let deleted = try await log.remove(rooms: rooms)
                logger.info("room messages removed", metadata: ["rooms": "\(rooms.count)", "messages": "\(deleted)"])
                return .done

            case .messageCounts(let rooms):
                return .admin(.messageCounts(try await log.messageCounts(rooms)))
            }
        }
    }

    /// The room's log, opened on first use after the rooms service confirmed the
    /// room exists (the `created` event usually opened it already).
    private func openLog(_ room: RoomID, envelope: RequestEnvelope<MessagingCommand>) async throws -> MessageLog.RoomState {
        let state = try await log.state(of: room)
        guard state == .unknown else { return state }
        let remaining = envelope.deadlineMs - currentTimeMs() - 200
        guard remaining > 0 else { throw ProtocolError.unavailable }
        do {
            _ = try await rooms.request(
                RoomsCommand.lookup(room: room), topic: Topics.roomsCommands, key: String(room),
                idempotencyKey: envelope.idempotencyKey + "/lookup", timeout: .milliseconds(remaining))
        } catch .refused(let error) {
            throw error
        } catch {
            throw ProtocolError.unavailable
        }
        try await log.open(room)
        return try await log.state(of: room)
    }

    /// Time kept between the last moment a say may commit and its deadline: the
    /// commit itself, and `answer`'s own margin for the reply's way back.
    static let commitMarginMs: Int64 = 250

    /// Stored is stored: a broker that refuses the event does not make the say an
    /// error. The client gets its success, and the event goes out as soon as the
    /// broker takes it again.
    private func publishOrQueue(_ message: ChatMessage, author: SessionID?) async {
        let stored = MessageStored(message: message, author: author)
        do { try await publish(stored) } catch {
            unpublished.add(stored)
            logger.warning(
                "message stored, event not yet published",
                metadata: ["room": "\(message.room)", "id": "\(message.id)", "error": "\(error)"])
        }
    }

    func publish(_ stored: MessageStored) async throws {
        try await events.publish(
            stored, schema: EventSchemas.message, topic: Topics.messageEvents, key: String(stored.message.room))
    }
}
