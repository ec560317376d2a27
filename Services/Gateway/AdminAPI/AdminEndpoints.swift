import GatewayCore
import GeoChatDomain
import GeoChatMetrics
import Hummingbird
import Logging
import Metrics
import Synchronization

/// What each admin endpoint does; one file per area (accounts, rooms, expiry,
/// bans, settings). Reads ask the owning services; changes go to them as
/// commands; every change lands in the audit log.
struct AdminEndpoints: Sendable {
    let backend: AdminBackend
    let sessions: SessionDirectory
    let presence: PresenceTracker
    let messages: MessageReadModel
    let rooms: RoomMap
    let settings: GatewaySettings
    let throttle: LoginThrottle
    /// Refused bearer tokens from one client address through this gateway: at
    /// most 60 a minute are asked about (each costs a round trip to the
    /// session service); beyond, 429 without asking. Counted in
    /// `geochat_admin_token_refusals_total`. A token granted within the last
    /// minute is always asked about: a valid token is never refused because
    /// of others' bad ones, whatever address they share.
    var tokenChecks = LoginThrottle(limit: 60, window: .seconds(60))
    let grantedTokens = RecentlyGranted()
    let keys: AdminKeys
    let logger: Logger

    var bans: BanList { sessions.bans }

    /// The operators' client, as the limits key it (the peer, or behind a trusted proxy the forwarded address).
    func clientAddress(_ request: Request, _ context: GatewayRequestContext) -> String {
        context.clientAddress(request, settings.clientAddresses)
    }

    /// The admin behind `Authorization: Bearer <token>`. Only the token's SHA-256
    /// leaves the gateway; the session service checks expiry and revocation.
    func authenticate(_ request: Request, from address: String) async throws(AdminFailure) -> (AdminIdentity, String) {
        guard let header = request.headers[.authorization] else {
            throw .unauthorized("log in first: POST /admin/login, then send 'Authorization: Bearer <token>'")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", let hash = BearerToken.hash(String(parts[1])) else {
            AdminMetrics.tokenRefusals["malformed"].increment()
            throw .unauthorized("the Authorization header is not a bearer token of this server")
        }
        let ticket = tokenChecks.admit(address: address)
        if ticket == nil && !grantedTokens.contains(hash) {
            AdminMetrics.tokenRefusals["throttled"].increment()
            throw AdminFailure(
                status: .tooManyRequests, code: "rate_limited",
                message: "too many refused tokens; try again in a minute")
        }
        switch try await backend.send(Authenticate(tokenHash: hash)) {
        case .granted(let identity):
            if let ticket { tokenChecks.succeeded(ticket) }
            grantedTokens.insert(hash)
            return (identity, hash)
        case .refused(let why):
            grantedTokens.remove(hash)
            AdminMetrics.tokenRefusals["refused"].increment()
            logger.notice("admin token refused", metadata: ["reason": "\(why)"])
            throw .unauthorized(why)
        }
    }
}

/// One authenticated admin request.
struct AdminCall: Sendable {
    let request: Request
    let context: GatewayRequestContext
    let admin: AdminIdentity
    let tokenHash: String

    var name: String { admin.name }

    func parameter(_ name: String) -> String? { context.parameters.get(name) }
}

/// What the admin API seals: admin passwords for the session service
/// (`LoginSeal`), and the commands only operators may send (`OperatorSeal`).
struct AdminKeys: Sendable {
    let login: LoginSeal
    let operatorCommands: OperatorSeal
}

enum AdminMetrics {
    /// Label `by`: `gateway` here (the session service counts `name` and `busy`).
    static let throttledLogins = LabeledFamily(counter: MetricNames.adminLoginsThrottled, label: "by")
    /// Label `why`: `malformed` (not a token of this server), `refused` (unknown,
    /// expired or revoked), `throttled` (not asked: too many refusals this minute).
    static let tokenRefusals = LabeledFamily(counter: MetricNames.adminTokenRefusals, label: "why")
}
