import GatewayCore
import GeoChatDomain
import GeoChatLegacyProtocol

/// Carries out checked legacy requests through `ChatActions` and answers with
/// the contract's XML.
struct LegacyHandler: Sendable {
    let actions: ChatActions

    /// `client`: the request's client, whose limits the core asks before a
    /// limited write or a read that costs far more than a poll.
    func handle(_ request: LegacyRequest, client: ChatClient) async throws(ProtocolError) -> String {
        switch request {
        case .chat(let command):
            return try await handle(command, client: client)
        case .lobbyPost(let user, let message):
            try await actions.lobbyPost(user: user, text: message, client: client)
            return LegacyXML.success()
        case .lobbyMessages(let past):
            return LegacyXML.lobbyMessages(try await actions.lobbyMessages(past: past, client: client))
        }
    }

    private func handle(
        _ command: ChatCommand, client: ChatClient
    ) async throws(ProtocolError) -> String {
        switch command {
        case .start(let nick):
            return LegacyXML.sessionID(try await actions.start(nick: nick, client: client).id)
        case .chats(let query):
            return LegacyXML.rooms(try await actions.rooms(in: query, client: client))
        case .create(let session, let position, let zoom, let topic):
            return LegacyXML.room(
                try await actions.create(session: session, position: position, zoom: zoom, topic: topic, client: client)
            )
        case .join(let session, let room):
            try await actions.join(session: session, room: room, client: client)
            return LegacyXML.success()
        case .leave(let session, let room):
            try await actions.leave(session: session, room: room, client: client)
            return LegacyXML.success()
        case .say(let session, let room, let text):
            return LegacyXML.success(
                id: try await actions.say(session: session, room: room, text: text, client: client).id)
        case .messages(let room, let past, let limit, let session, let waitSeconds):
            let found = try await actions.messages(
                room: room, past: past, limit: limit, session: session, wait: .seconds(waitSeconds),
                client: client)
            return LegacyXML.messages(room: room, found)
        case .participants(let room):
            return LegacyXML.participants(room: room, nicks: try await actions.participants(of: room, client: client))
        case .nick(let session, let nick):
            _ = try await actions.rename(session, to: nick, client: client)
            return LegacyXML.success()
        case .end(let session):
            try await actions.end(session)
            return LegacyXML.success()
        }
    }
}
