import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Logging
import Synchronization

/// Follows every partition of the event topics from their end and feeds the
/// gateway's read models. No consumer group: every gateway sees every event.
package struct EventFeed: Sendable {
    package static let topics = [Topics.messageEvents, Topics.roomEvents, Topics.sessionEvents, Topics.presence]

    package let consumer: KafkaConsumer
    package let messages: MessageReadModel
    package let rooms: RoomMap
    package let sessions: SessionDirectory
    package let presence: PresenceTracker
    /// Push subscribers' participant lists, read again after a membership changes.
    package let participants: ParticipantLists
    package let logger: Logger

    package init(
        consumer: KafkaConsumer, messages: MessageReadModel, rooms: RoomMap, sessions: SessionDirectory,
        presence: PresenceTracker, participants: ParticipantLists, logger: Logger
    ) {
        self.consumer = consumer
        self.messages = messages
        self.rooms = rooms
        self.sessions = sessions
        self.presence = presence
        self.participants = participants
        self.logger = logger
    }

    package func run() async {
        for await record in consumer.records {
            switch record.topic {
            case Topics.messageEvents:
                if let stored = EventDecoding.decode(MessageStored.self, from: record) {
                    BusSpans.applying(record) {
                        messages.apply(stored.message)
                        rooms.visited(stored.message.room, atMs: stored.message.addedAt)
                    }
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
