import GeoChatBus
import GeoChatDomain
import GeoChatMetrics
import Metrics
import Synchronization

/// Where the read model gets a room's history and committed head: the messaging service.
package protocol MessageHistorySource: Sendable {
    func history(room: RoomID, after: MessageID?, limit: Int) async throws(ProtocolError) -> MessageHistory
    func heads(_ rooms: [RoomID]) async throws(ProtocolError) -> [RoomHead]
}
