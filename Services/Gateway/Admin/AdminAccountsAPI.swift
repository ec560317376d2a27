import GeoChatDomain
import Hummingbird

/// Logging in and out, the session list, the audit log.
extension AdminEndpoints {
    func login(_ request: Request) async throws(AdminFailure) -> Response {
        guard throttle.allowsAttempt else {
            await backend.audit("-", "login", "-", "throttled", "gateway-wide failed-login limit")
            throw .tooManyLogins()
        }
        let body = try await AdminJSON.body(AdminAPI.LoginRequest.self, of: request)
        let reply: AdminReply
        do {
            reply = try await backend.admin(.login(name: body.name, password: body.password), key: String(body.name.prefix(64)))
        } catch {
            if error.status == .tooManyRequests { throttle.recordFailure() }
            throw error
        }
        switch reply {
        case .token(let login):
            return AdminJSON.response(login)
        case .unauthorized(let why):
            throttle.recordFailure()
            throw .unauthorized(why)
        default:
            throw AdminFailure(.unavailable)
        }
    }

    func logout(_ call: AdminCall) async throws(AdminFailure) -> Response {
        _ = try await backend.admin(.logout(tokenHash: call.tokenHash, admin: call.name), key: call.name)
        return AdminJSON.response(AdminAPI.LogoutResponse())
    }

    func sessions(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let limit = try AdminJSON.int(call.request, "limit", default: 100, range: 1...1000)
        let nick = AdminJSON.text(call.request, "nick")
        guard case .sessions(let found) = try await backend.admin(.sessions(nick: nick, limit: limit), key: call.name) else {
            throw AdminFailure(.unavailable)
        }
        let views = found.map { session in
            AdminAPI.SessionView(
                session, banned: SessionID(session.id).map { bans.isBanned(session: $0, nick: session.nick) } ?? false)
        }
        return AdminJSON.response(AdminAPI.SessionsResponse(sessions: views))
    }

    func auditLog(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let limit = try AdminJSON.int(call.request, "limit", default: 100, range: 1...1000)
        guard case .audit(let entries) = try await backend.admin(.auditLog(limit: limit), key: call.name) else {
            throw AdminFailure(.unavailable)
        }
        return AdminJSON.response(AdminAPI.AuditResponse(entries: entries))
    }
}
