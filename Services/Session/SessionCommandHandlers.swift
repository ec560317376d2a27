import GeoChatBus
import GeoChatDomain
import Logging

/// The session service's command handlers: change the table and stage the
/// event in one transaction, hand the event to the broker, answer. The answer
/// waits for the broker's word on the event (so gateways usually have it before
/// the phone has the answer) but not for its success: a refused event is
/// committed in the outbox, and its relay publishes it.
struct SessionCommandHandlers: Sendable {
    let store: any SessionStore
    let outbox: OutboxRelay<StagedEvent>
    let logger: Logger

    var handlers: CommandHandlers {
        var handlers = CommandHandlers(topic: Topics.sessionCommands)
        handlers.on(StartSession.self) { try await start($0, $1) }
        handlers.on(LookupSession.self) { command, _ in try await lookup(command) }
        handlers.on(RenameSession.self) { command, _ in try await rename(command) }
        handlers.on(EndSession.self) { try await end($0, $1) }
        return handlers
    }

    func start(_ command: StartSession, _ context: CommandContext) async throws -> SessionInfo {
        let nick = command.nick
        let started = try await store.start(nick: nick, key: context.idempotencyKey)
        await outbox.announceAndWait(started.event)
        if started.changed {
            logger.info("session started", metadata: ["session": "\(started.value.id)", "nick": "\(nick)"])
        }
        return started.value
    }

    func lookup(_ command: LookupSession) async throws -> SessionInfo {
        guard let session = try await store.find(command.session) else { throw ProtocolError.invalidSession }
        return session
    }

    func rename(_ command: RenameSession) async throws -> SessionInfo {
        let nick = command.nick
        guard let renamed = try await store.rename(command.session, to: nick) else {
            throw ProtocolError.invalidSession
        }
        await outbox.announceAndWait(renamed.event)
        logger.info("session renamed", metadata: ["session": "\(command.session)", "nick": "\(nick)"])
        return renamed.value
    }

    func end(_ command: EndSession, _ context: CommandContext) async throws -> SessionInfo {
        guard let ended = try await store.end(command.session, key: context.idempotencyKey) else {
            throw ProtocolError.invalidSession
        }
        await outbox.announceAndWait(ended.event)
        if ended.changed { logger.info("session ended", metadata: ["session": "\(command.session)"]) }
        return ended.value
    }
}
