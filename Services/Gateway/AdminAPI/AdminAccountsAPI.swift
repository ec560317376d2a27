import GatewayCore
import GeoChatAdminAPI
import GeoChatDomain
import Hummingbird

/// Logging in and out, the session list, the audit log.
extension AdminEndpoints {
    func login(_ request: Request, from address: String) async throws(AdminFailure) -> Response {
        guard let ticket = throttle.admit(address: address) else {
            AdminMetrics.throttledLogins["gateway"].increment()
            if let suppressed = throttle.refusalToAudit() {
                await backend.audit(
                    "-", "login", "-", "throttled",
                    "failed-login limit of the address \(address)"
                        + (suppressed > 0 ? "; \(suppressed) more refused in the minute before" : ""))
            }
            throw .tooManyLogins()
        }
        let body = try await AdminJSON.body(AdminAPI.LoginRequest.self, of: request)
        // From here the attempt counts as a failure (a timeout too) unless granted.
        // The gateway mints the token: only its hash and the sealed password
        // cross Kafka (docs/security.md, "Secrets and the bus").
        let token = BearerToken.generate()
        let tokenHash = BearerToken.hash(token)!
        let command = LogIn(
            name: body.name, sealedPassword: keys.login.seal(body.password, name: body.name, tokenHash: tokenHash),
            tokenHash: tokenHash, source: address)
        switch try await backend.send(command) {
        case .granted(let identity):
            throttle.succeeded(ticket)
            return AdminJSON.response(AdminLogin(token: token, name: identity.name, expiresAtMs: identity.expiresAtMs))
        case .refused(let why):
            throw .unauthorized(why)
        }
    }

    func logout(_ call: AdminCall) async throws(AdminFailure) -> Response {
        _ = try await backend.send(LogOut(tokenHash: call.tokenHash, admin: call.name))
        return AdminJSON.response(AdminAPI.LogoutResponse())
    }

    func sessions(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let limit = try AdminJSON.int(call.request, "limit", default: 100, range: 1...1000)
        let nick = AdminJSON.text(call.request, "nick")
        let found = try await backend.send(ListLiveSessions(nick: nick, limit: limit))
        let views = found.map { session in
            AdminAPI.SessionView(
                session, banned: SessionID(session.id).map { bans.isBanned(session: $0, nick: session.nick) } ?? false)
        }
        return AdminJSON.response(AdminAPI.SessionsResponse(sessions: views))
    }

    /// `?limit=&before=&actor=&action=&outcome=`: a page, newest first; `next` asks for the one after.
    func auditLog(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let limit = try AdminJSON.int(call.request, "limit", default: 100, range: 1...1000)
        var before: Int64?
        if let raw = AdminJSON.text(call.request, "before") {
            guard let id = Int64(raw) else { throw .badRequest("'before' must be an audit row id") }
            before = id
        }
        let query = AuditQuery(
            before: before, actor: AdminJSON.text(call.request, "actor"),
            action: AdminJSON.text(call.request, "action"),
            outcome: AdminJSON.text(call.request, "outcome"))
        if let problem = query.problem { throw .badRequest("'\(problem.field)' \(problem.why)") }
        let entries = try await backend.send(ReadAuditLog(limit: limit, query: query))
        return AdminJSON.response(
            AdminAPI.AuditResponse(entries: entries, next: entries.count == limit ? entries.last?.id : nil))
    }
}
