import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Logging
import Synchronization

/// Follows every partition of the event topics from their end and feeds the
/// gateway's read models. No consumer group: every gateway sees every event.
struct EventFeed: Sendable {
    static let topics = [Topics.messageEvents, Topics.roomEvents, Topics.sessionEvents, Topics.presence]

    let consumer: KafkaConsumer
    let messages: MessageReadModel
    let rooms: RoomMap
    let sessions: SessionDirectory
    let presence: PresenceTracker
    /// Push subscribers' participant lists, read again after a membership changes.
    let participants: ParticipantLists
    let logger: Logger

    func run() async {
        for await record in consumer.records {
            switch record.topic {
            case Topics.messageEvents:
                if let stored = EventDecoding.decode(MessageStored.self, from: record) {
                    messages.apply(stored.message)
                    rooms.visited(stored.message.room, atMs: stored.message.addedAt)
                }
            case Topics.roomEvents:
                switch EventDecoding.decode(RoomEvent.self, from: record) {
                case .created(let room)?:
                    rooms.created(room, atMs: WallClock.nowMs())
                case .joined(let room, _, _)?:
                    rooms.visited(room, atMs: WallClock.nowMs())
                    membersChanged(room)
                case .left(let room, _)?:
                    membersChanged(room)
                case .removed(let room, _)?:
                    messages.remove([room])
                    rooms.removed([room])
                case .removedRooms(let removed, _)?:
                    messages.remove(removed)
                    rooms.removed(removed)
                case nil:
                    break
                }
            case Topics.sessionEvents:
                if let event = EventDecoding.decode(SessionEvent.self, from: record) {
                    sessions.apply(event)
                }
            case Topics.presence:
                if let batch = EventDecoding.decode(PresenceBatch.self, from: record) {
                    presence.record(batch)
                }
            default:
                break
            }
        }
    }

    private func membersChanged(_ room: RoomID) {
        participants.invalidate(room)
        messages.signals.ring(room, .members)
    }
}
