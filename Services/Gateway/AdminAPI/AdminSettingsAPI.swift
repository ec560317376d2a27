import GatewayCore
import GeoChatAdminAPI
import GeoChatDomain
import Hummingbird

/// Settings: read them all; change some (all or nothing, checked by the
/// session service, which stores them and broadcasts them on `geochat.settings`).
extension AdminEndpoints {
    func settings(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let stored = try await backend.send(ReadSettings())
        return AdminJSON.response(AdminAPI.SettingsResponse(stored: stored))
    }

    /// Body: `{"room.cap": 200, "presence.timeout.s": 30}`.
    func changeSettings(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let changes = try await AdminJSON.body([String: Int].self, of: call.request)
        guard changes.count <= SettingsCatalog.all.count else { throw .badRequest("more settings than there are") }
        let stored = try await backend.send(ChangeSettings(changes, by: call.name))
        for setting in stored { settings.live.apply(setting) }
        return AdminJSON.response(AdminAPI.SettingsResponse(stored: stored))
    }
}
