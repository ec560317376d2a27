import GatewayCore
import GeoChatDomain
import Hummingbird
import Logging

/// The admin API, under `<prefix>/admin/`: JSON in and out, a bearer token on
/// everything but `login`. The table below is the whole API.
struct AdminRoutes: Sendable {
    let endpoints: AdminEndpoints
    let pathPrefix: String

    func register(on router: Router<GatewayRequestContext>) {
        let admin = router.group(RouterPath(pathPrefix + "/admin"))
        admin.post("login") { request, context in
            await respond { () async throws(AdminFailure) in
                try await endpoints.login(request, from: endpoints.clientAddress(request, context))
            }
        }
        admin.post("logout", use: authenticated(endpoints.logout))
        admin.get("openapi.json") { _, _ in AdminOpenAPISpec.response }

        admin.get("rooms", use: authenticated(endpoints.rooms))
        admin.get("rooms/:room", use: authenticated(endpoints.room))
        admin.delete("rooms/:room", use: authenticated(endpoints.removeRoom))
        admin.patch("rooms/:room", use: authenticated(endpoints.changeRoom))
        admin.get("rooms/:room/transcript", use: authenticated(endpoints.transcript))
        admin.delete("rooms/:room/messages/:message", use: authenticated(endpoints.removeMessage))
        admin.post("messages/removals", use: authenticated(endpoints.removeSessionMessages))

        admin.post("expiry/runs", use: authenticated(endpoints.startExpiryRun))
        admin.get("expiry/runs", use: authenticated(endpoints.expiryRuns))
        admin.get("expiry/runs/:job", use: authenticated(endpoints.expiryRun))

        admin.get("sessions", use: authenticated(endpoints.sessions))
        admin.put("sessions/:session", use: authenticated(endpoints.renameSession))
        admin.delete("sessions/:session", use: authenticated(endpoints.endSession))

        admin.get("bans", use: authenticated(endpoints.bans))
        admin.post("bans", use: authenticated(endpoints.ban))
        admin.delete("bans/:kind/:value", use: authenticated(endpoints.unban))

        admin.get("settings", use: authenticated(endpoints.settings))
        admin.put("settings", use: authenticated(endpoints.changeSettings))

        admin.get("audit", use: authenticated(endpoints.auditLog))
    }

    typealias Endpoint = @Sendable (AdminCall) async throws(AdminFailure) -> Response

    /// Runs the endpoint for the admin behind the request's bearer token; 401 without one.
    private func authenticated(_ endpoint: @escaping Endpoint)
        -> @Sendable (Request, GatewayRequestContext) async -> Response
    {
        { request, context in
            await respond { () async throws(AdminFailure) in
                let (admin, tokenHash) = try await endpoints.authenticate(
                    request, from: endpoints.clientAddress(request, context))
                return try await endpoint(
                    AdminCall(request: request, context: context, admin: admin, tokenHash: tokenHash))
            }
        }
    }

    private func respond(_ body: () async throws(AdminFailure) -> Response) async -> Response {
        do {
            return try await body()
        } catch {
            if error.status == .serviceUnavailable {
                endpoints.logger.warning("admin request answered unavailable", metadata: ["error": "\(error.message)"])
            }
            return AdminJSON.failure(error)
        }
    }
}
