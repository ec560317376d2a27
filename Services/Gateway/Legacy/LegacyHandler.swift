import GatewayCore
import GeoChatDomain
import GeoChatLegacyProtocol
import NIOCore

/// Carries out checked legacy requests through `ChatActions` and answers with
/// the contract's XML, as the bytes of the response's body.
struct LegacyHandler: Sendable {
    let actions: ChatActions

    /// `client`: the request's client, whose limits the core asks before a
    /// limited write or a read that costs far more than a poll.
    func handle(_ request: LegacyRequest, client: ChatClient) async throws(ProtocolError) -> ByteBuffer {
        switch request {
        case .chat(let command):
            return try await handle(command, client: client)
        case .lobbyPost(let user, let message):
            try await actions.lobbyPost(user: user, text: message, client: client)
            return body(LegacyXML.success())
        case .lobbyMessages(let past):
            return body(LegacyXML.lobbyMessages(try await actions.lobbyMessages(past: past, client: client)))
        }
    }

    private func handle(
        _ command: ChatCommand, client: ChatClient
    ) async throws(ProtocolError) -> ByteBuffer {
        switch command {
        case .start(let nick):
            return body(LegacyXML.sessionID(try await actions.start(nick: nick, client: client).id))
        case .chats(let query):
            // The largest answer the contract has: written from the index's own bytes, never a `String`.
            let document = try await actions.withRooms(in: query, client: client) { rooms in
                var document = LegacyXML.RoomsDocument(rooms: rooms.count)
                rooms.forEachRoom { document.append(id: $0, position: $1, zoom: $2, topicUTF8: $3) }
                return document.finish()
            }
            return ByteBuffer(bytes: document)
        case .create(let session, let position, let zoom, let topic):
            return body(
                LegacyXML.room(
                    try await actions.create(
                        session: session, position: position, zoom: zoom, topic: topic, client: client)))
        case .join(let session, let room):
            try await actions.join(session: session, room: room, client: client)
            return body(LegacyXML.success())
        case .leave(let session, let room):
            try await actions.leave(session: session, room: room, client: client)
            return body(LegacyXML.success())
        case .say(let session, let room, let text):
            let said = try await actions.say(session: session, room: room, text: text, client: client)
            return body(LegacyXML.success(id: said.id))
        case .messages(let room, let past, let limit, let session, let waitSeconds):
            let found = try await actions.messages(
                room: room, past: past, limit: limit, session: session, wait: .seconds(waitSeconds),
                client: client)
            return body(LegacyXML.messages(room: room, found))
        case .participants(let room):
            return body(
                LegacyXML.participants(room: room, nicks: try await actions.participants(of: room, client: client)))
        case .nick(let session, let nick):
            _ = try await actions.rename(session, to: nick, client: client)
            return body(LegacyXML.success())
        case .end(let session):
            try await actions.end(session)
            return body(LegacyXML.success())
        }
    }

    private func body(_ xml: String) -> ByteBuffer { ByteBuffer(string: xml) }
}
