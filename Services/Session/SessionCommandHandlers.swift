import GeoChatBus
import GeoChatDomain
import Logging

/// The session service's command handlers: change the table, publish the event, answer.
struct SessionCommandHandlers: Sendable {
    let store: any SessionStore
    let events: any EventPublisher
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
        guard let nick = Nickname(command.nick) else { throw ProtocolError(.invalidNick, "nickname is not valid") }
        let (session, isNew) = try await store.start(nick: nick, key: context.idempotencyKey)
        if isNew {
            try await events.publish(SessionEvent.started(session))
            logger.info("session started", metadata: ["session": "\(session.id)", "nick": "\(nick)"])
        }
        return session
    }

    func lookup(_ command: LookupSession) async throws -> SessionInfo {
        guard let session = try await store.find(command.session) else { throw ProtocolError.invalidSession }
        return session
    }

    func rename(_ command: RenameSession) async throws -> SessionInfo {
        guard let nick = Nickname(command.nick) else { throw ProtocolError(.invalidNick, "nickname is not valid") }
        guard let session = try await store.rename(command.session, to: nick) else { throw ProtocolError.invalidSession }
        try await events.publish(SessionEvent.renamed(session))
        logger.info("session renamed", metadata: ["session": "\(command.session)", "nick": "\(nick)"])
        return session
    }

    func end(_ command: EndSession, _ context: CommandContext) async throws -> SessionInfo {
        guard let session = try await store.end(command.session, key: context.idempotencyKey) else {
            throw ProtocolError.invalidSession
        }
        try await events.publish(SessionEvent.ended(session, reason: "end"))
        logger.info("session ended", metadata: ["session": "\(command.session)"])
        return session
    }
}
