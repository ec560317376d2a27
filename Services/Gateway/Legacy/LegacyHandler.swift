import GeoChatDomain
import GeoChatLegacyProtocol
import GatewayCore

/// Carries out checked legacy requests through `ChatActions` and answers with
/// the contract's XML.
struct LegacyHandler: Sendable {
    let actions: ChatActions

    /// `admitCostlyRead`: the client's limits, asked before a read that costs
    /// far more than a poll (`RateLimiter.CostlyRead`).
    func handle(_ request: LegacyRequest, admitCostlyRead: ChatActions.AdmitCostlyRead) async throws(ProtocolError) -> String {
        switch request {
        case .chat(let command):
            return try await handle(command, admitCostlyRead: admitCostlyRead)
        case .lobbyPost(let user, let message):
            try await actions.lobbyPost(user: user, text: message)
            return LegacyXML.success()
        case .lobbyMessages(let past):
            return LegacyXML.lobbyMessages(try await actions.lobbyMessages(past: past, admitCostlyRead: admitCostlyRead))
        }
    }

    private func handle(
        _ command: ChatCommand, admitCostlyRead: ChatActions.AdmitCostlyRead
    ) async throws(ProtocolError) -> String {
        switch command {
        case .start(let nick):
            return LegacyXML.sessionID(try await actions.start(nick: nick).id)
        case .chats(let query):
            return LegacyXML.rooms(try await actions.rooms(in: query, admitCostlyRead: admitCostlyRead))
        case .create(let session, let position, let zoom, let topic):
            return LegacyXML.room(try await actions.create(session: session, position: position, zoom: zoom, topic: topic))
        case .join(let session, let room):
            try await actions.join(session: session, room: room)
            return LegacyXML.success()
        case .leave(let session, let room):
            try await actions.leave(session: session, room: room)
            return LegacyXML.success()
        case .say(let session, let room, let text):
            return LegacyXML.success(id: try await actions.say(session: session, room: room, text: text).id)
        case .messages(let room, let past, let limit, let session, let waitSeconds):
            let found = try await actions.messages(
                room: room, past: past, limit: limit, session: session, wait: .seconds(waitSeconds),
                admitCostlyRead: admitCostlyRead)
            return LegacyXML.messages(room: room, found)
        case .participants(let room):
            return LegacyXML.participants(room: room, nicks: try await actions.participants(of: room, admitCostlyRead: admitCostlyRead))
        case .nick(let session, let nick):
            _ = try await actions.rename(session, to: nick)
            return LegacyXML.success()
        case .end(let session):
            try await actions.end(session)
            return LegacyXML.success()
        }
    }

    func signOfLife(_ id: SessionID?, client: ClientLimits) throws(ProtocolError) {
        try actions.signOfLife(id, client: client)
    }
}
