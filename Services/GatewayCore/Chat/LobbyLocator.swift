import GeoChatDomain
import Synchronization

/// The lobby room's id, asked of the rooms service once.
package final class LobbyLocator: Sendable {
    private let known = Mutex<RoomID?>(nil)

    package init() {}

    package func room(_ backend: ServiceClients) async throws(ProtocolError) -> RoomID {
        if let id = known.withLock({ $0 }) { return id }
        let lobby = try await backend.send(LocateLobby())
        known.withLock { $0 = lobby.id }
        return lobby.id
    }
}
