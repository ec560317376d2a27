import GeoChatBus
import GeoChatDomain
import GeoChatKafka

enum RoomLogState: Equatable {
    case unknown
    case open(head: MessageID)
    case removed
}
