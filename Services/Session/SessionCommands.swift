import GeoChatDomain
import GeoChatKafka
import GeoChatRuntime
import Logging

/// Runs session commands: change the table, publish the event, answer.
struct SessionCommands: Sendable {
    let store: SessionStore
    let events: EventPublisher
    let logger: Logger

    func handle(_ envelope: RequestEnvelope<SessionCommand>) async -> Result<ReplyBody, ProtocolError> {
        await answer(envelope, logger: logger) {
            switch envelope.command {
            case .start(let rawNick):
                guard let nick = Nickname(rawNick) else { throw ProtocolError(.invalidNick, "nickname is not valid") }
                let (session, isNew) = try await store.start(nick: nick, key: envelope.idempotencyKey)
                if isNew {
                    try await publish(.started(session), session.id)
                    logger.info("session started", metadata: ["session": "\(session.id)", "nick": "\(nick)"])
                }
                return .session(session)

            case .lookup(let id):
                guard let session = try await store.find(id) else { throw ProtocolError.invalidSession }
                return .session(session)

            case .rename(let id, let rawNick):
                guard let nick = Nickname(rawNick) else { throw ProtocolError(.invalidNick, "nickname is not valid") }
                guard let session = try await store.rename(id, to: nick) else { throw ProtocolError.invalidSession }
                try await publish(.renamed(session), id)
                logger.info("session renamed", metadata: ["session": "\(id)", "nick": "\(nick)"])
                return .session(session)

            case .end(let id):
                guard let session = try await store.end(id, key: envelope.idempotencyKey) else {
                    throw ProtocolError.invalidSession
                }
                try await publish(.ended(session, reason: "end"), id)
                logger.info("session ended", metadata: ["session": "\(id)"])
                return .session(session)
            }
        }
    }

    func publish(_ event: SessionEvent, _ id: SessionID) async throws {
        try await events.publish(event, schema: EventSchemas.session, topic: Topics.sessionEvents, key: id.value)
    }
}
