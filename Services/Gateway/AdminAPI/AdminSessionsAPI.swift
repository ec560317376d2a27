import GatewayCore
import GeoChatAdminAPI
import GeoChatDomain
import Hummingbird

/// Sessions: end one (its next request gets the protocol's answer for an
/// unknown session) or rename one. The session service owns them; the change
/// is its event, which every gateway applies; this one applies it at once.
/// The list of a nickname's sessions is `GET sessions?nick=`.
extension AdminEndpoints {
    /// `DELETE sessions/{session}?reason=…`
    func endSession(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let session = try sessionID(call)
        let reason = try Self.reason(AdminJSON.text(call.request, "reason"))
        let ended = try await changeSession(session, "end-session", reason: reason, call) {
            () async throws(AdminFailure) in
            try await backend.send(EndSession(session: session))
        }
        sessions.apply(.ended(ended, reason: "ended by an operator"))
        return AdminJSON.response(AdminAPI.SessionChangedResponse(ended))
    }

    /// `PUT sessions/{session}` with `{"nick": "…", "reason": "…"}`: the
    /// nickname rules of a phone's rename apply (a taken one gets a suffix).
    func renameSession(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let session = try sessionID(call)
        let body = try await AdminJSON.body(AdminAPI.RenameSessionRequest.self, of: call.request)
        guard let nick = Nickname(body.nick) else { throw AdminFailure(ProtocolError.invalidNick) }
        let reason = try Self.reason(body.reason)
        let renamed = try await changeSession(session, "rename-session", reason: reason, call) {
            () async throws(AdminFailure) in try await backend.send(RenameSession(session: session, nick: nick))
        }
        sessions.apply(.renamed(renamed))
        return AdminJSON.response(AdminAPI.SessionChangedResponse(renamed))
    }

    /// Runs the change, audited (`audited`); an unknown or ended session is 404.
    private func changeSession(
        _ session: SessionID, _ action: String, reason: String, _ call: AdminCall,
        _ change: () async throws(AdminFailure) -> SessionInfo
    ) async throws(AdminFailure) -> SessionInfo {
        try await audited(call, action, "session \(session)", reason: reason) { () async throws(AdminFailure) in
            do throws(AdminFailure) {
                let info = try await change()
                return (info, "nick \(info.nick)")
            } catch {
                guard error.code != ProtocolError.Code.invalidSession.rawValue else {
                    throw .notFound("no live session \(session)")
                }
                throw error
            }
        }
    }

    private func sessionID(_ call: AdminCall) throws(AdminFailure) -> SessionID {
        guard let raw = call.parameter("session"), let id = SessionID(raw) else {
            throw .badRequest("not a session id")
        }
        return id
    }
}
