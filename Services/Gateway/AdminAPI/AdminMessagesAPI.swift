import GatewayCore
import GeoChatAdminAPI
import GeoChatDomain
import Hummingbird

/// Messages: remove one, or a session's (in one room or everywhere, from a
/// time on). The messaging service decides and announces each removal as it
/// announces a message; this gateway takes its own removals at once, the
/// others when the events arrive. Every removal is audited (`audited`).
extension AdminEndpoints {
    /// `DELETE rooms/{room}/messages/{message}?reason=…`
    func removeMessage(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let room = try roomID(call)
        guard let raw = call.parameter("message"), let id = Int64(raw), id > 0 else {
            throw .badRequest("the message id must be a positive integer")
        }
        let reason = try Self.reason(AdminJSON.text(call.request, "reason"))
        let removed = try await removeMessages(
            .message(room: room, id: MessageID(id)), limit: 1, reason: reason, call)
        return AdminJSON.response(AdminAPI.MessagesRemovedResponse(removed: removed.removed.count, more: false))
    }

    /// `POST messages/removals` with `RemoveMessagesRequest` (a session's, or the
    /// writer's of one message): at most `limit`
    /// (default and most: `RemoveMessages.maxLimit`) a call, oldest first; the
    /// caller asks again while `more` is true.
    func removeSessionMessages(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let body = try await AdminJSON.body(AdminAPI.RemoveMessagesRequest.self, of: call.request)
        if let room = body.room, room <= 0 { throw .badRequest("'room' must be a positive integer") }
        let limit = body.limit ?? RemoveMessages.maxLimit
        guard (1...RemoveMessages.maxLimit).contains(limit) else {
            throw .badRequest("'limit' must be between 1 and \(RemoveMessages.maxLimit)")
        }
        let since = body.sinceMs ?? 0
        guard since >= 0 else { throw .badRequest("'sinceMs' must be 0 or more (milliseconds since 1970)") }
        let room = body.room.map { RoomID($0) }
        let selection: MessageSelection
        switch (body.session, body.senderOf) {
        case (let raw?, nil):
            guard let session = SessionID(raw) else { throw .badRequest("'session' is not a session id") }
            selection = .bySession(session, room: room, sinceMs: since)
        case (nil, let message?):
            guard message.room > 0, message.id > 0 else {
                throw .badRequest("'senderOf' needs a positive 'room' and 'id'")
            }
            selection = .bySenderOf(message, room: room, sinceMs: since)
        default: throw .badRequest("give one of 'session' and 'senderOf'")
        }
        let removed = try await removeMessages(selection, limit: limit, reason: try Self.reason(body.reason), call)
        return AdminJSON.response(
            AdminAPI.MessagesRemovedResponse(removed: removed.removed.count, more: removed.more))
    }

    private func removeMessages(
        _ selection: MessageSelection, limit: Int, reason: String, _ call: AdminCall
    ) async throws(AdminFailure) -> RemovedMessages {
        let removed = try await audited(call, "remove-messages", selection.description, reason: reason) {
            () async throws(AdminFailure) in
            let removed = try await backend.send(
                keys.operatorCommands.sealed(RemoveMessages(selection, limit: limit, by: call.name)))
            return (removed, "\(removed.removed.count) removed" + (removed.more ? ", more selected" : ""))
        }
        // This gateway stops showing them at once; the others on the events.
        for (room, keys) in Dictionary(grouping: removed.removed, by: \.room) {
            messages.apply(MessagesRemoved(room: room, ids: keys.map(\.id)))
        }
        return removed
    }
}
