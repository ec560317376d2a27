import GatewayCore
import GeoChatAdminAPI
import GeoChatDomain
import Hummingbird

/// Bans of a nickname or a session. The session service stores them and
/// broadcasts them on `geochat.bans`; this gateway applies its own change at
/// once, the others when the record arrives.
extension AdminEndpoints {
    func bans(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let bans = try await backend.send(ListBans())
        return AdminJSON.response(AdminAPI.BansResponse(bans: bans))
    }

    func ban(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let body = try await AdminJSON.body(AdminAPI.BanRequest.self, of: call.request)
        let target: BanTarget
        switch (body.nick, body.session) {
        case (let nick?, nil):
            guard let t = BanTarget(kind: .nick, value: nick) else {
                throw .badRequest("'nick' is not a valid nickname")
            }
            target = t
        case (nil, let session?):
            guard let t = BanTarget(kind: .session, value: session) else {
                throw .badRequest("'session' is not a session id")
            }
            target = t
        default:
            throw .badRequest("give exactly one of 'nick' and 'session'")
        }
        let ban = try await backend.send(PlaceBan(target, reason: body.reason ?? "", by: call.name))
        bans.apply(ban)
        return AdminJSON.response(AdminAPI.BanResponse(ban: ban), status: .created)
    }

    func unban(_ call: AdminCall) async throws(AdminFailure) -> Response {
        guard let kind = call.parameter("kind").flatMap(BanTarget.Kind.init(rawValue:)) else {
            throw .badRequest("ban kind must be 'nick' or 'session'")
        }
        guard let value = call.parameter("value"), let target = BanTarget(kind: kind, value: value) else {
            throw .badRequest("not a valid \(kind.rawValue)")
        }
        let ban = try await backend.send(LiftBan(target, by: call.name))
        bans.apply(ban)
        return AdminJSON.response(AdminAPI.BanResponse(ban: ban))
    }
}
