import GeoChatDomain
import Hummingbird
import Logging

/// What each admin endpoint does; one file per area (accounts, rooms, expiry,
/// bans, settings). Reads ask the owning services; changes go to them as
/// commands; every change lands in the audit log.
struct AdminEndpoints: Sendable {
    let backend: AdminBackend
    let sessions: SessionDirectory
    let presence: PresenceTracker
    let messages: MessageReadModel
    let settings: GatewaySettings
    let throttle: LoginThrottle
    /// Refused bearer tokens through this gateway: at most 60 a minute are
    /// asked about (each costs a round trip to the session service); beyond,
    /// 429 without asking. Counted in `geochat_admin_token_refusals_total`.
    var tokenChecks = LoginThrottle(limit: 60, window: .seconds(60))
    let loginSeal: LoginSeal
    let logger: Logger

    var bans: BanList { sessions.bans }

    /// The admin behind `Authorization: Bearer <token>`. Only the token's SHA-256
    /// leaves the gateway; the session service checks expiry and revocation.
    func authenticate(_ request: Request) async throws(AdminFailure) -> (AdminIdentity, String) {
        guard let header = request.headers[.authorization] else {
            throw .unauthorized("log in first: POST /admin/login, then send 'Authorization: Bearer <token>'")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", let hash = BearerToken.hash(String(parts[1])) else {
            AdminMetrics.tokenRefusals["malformed"].increment()
            throw .unauthorized("the Authorization header is not a bearer token of this server")
        }
        guard let ticket = tokenChecks.admit() else {
            AdminMetrics.tokenRefusals["throttled"].increment()
            throw AdminFailure(status: .tooManyRequests, code: "rate_limited", message: "too many refused tokens; try again in a minute")
        }
        switch try await backend.send(Authenticate(tokenHash: hash)) {
        case .granted(let identity):
            tokenChecks.succeeded(ticket)
            return (identity, hash)
        case .refused(let why):
            AdminMetrics.tokenRefusals["refused"].increment()
            logger.notice("admin token refused", metadata: ["reason": "\(why)"])
            throw .unauthorized(why)
        }
    }
}
