import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Logging
import Synchronization

/// Follows every partition of the event topics from their end and feeds the
/// gateway's read models. No consumer group: every gateway sees every event.
/// Each is one per write (a message, a room or membership change, a session's
/// start, rename or end), never per phone-second: presence batches go to the
/// rooms service alone, so what a gateway reads does not grow with the phones
/// other gateways serve (docs/capacity.md, "Cluster sizes").
package struct EventFeed: Sendable {
    package static let topics = [Topics.messageEvents, Topics.roomEvents, Topics.sessionEvents]

    package let consumer: KafkaConsumer
    package let messages: MessageReadModel
    package let rooms: RoomMap
    package let sessions: SessionDirectory
    /// Push subscribers' participant lists, read again after a membership changes.
    package let participants: ParticipantLists
    /// This gateway's requests: an event answers the request that announced it (`EventEnvelope.answers`).
    package let requests: any CommandBus
    package let logger: Logger

    package init(
        consumer: KafkaConsumer, messages: MessageReadModel, rooms: RoomMap, sessions: SessionDirectory,
        participants: ParticipantLists, requests: any CommandBus, logger: Logger
    ) {
        self.consumer = consumer
        self.messages = messages
        self.rooms = rooms
        self.sessions = sessions
        self.participants = participants
        self.requests = requests
        self.logger = logger
    }

    package func run() async {
        for await record in consumer.records {
            switch record.topic {
            case Topics.messageEvents:
                if let envelope = EventDecoding.envelope(MessageStored.self, from: record.value) {
                    let stored = envelope.event
                    BusSpans.applying(record) {
                        messages.apply(stored.message, shownFrom: stored.shownFrom)
                        rooms.visited(stored.message.room, atMs: stored.message.addedAt)
                    }
                    // After the timeline has it: the sayer's next poll here finds it.
                    if let request = envelope.answers { requests.answered(request, by: stored.message) }
                } else if let removal = EventDecoding.decode(MessagesRemoved.self, from: record) {
                    BusSpans.applying(record) { messages.apply(removal) }
                }
            case Topics.roomEvents:
                let envelope = EventDecoding.envelope(RoomEvent.self, from: record.value)
                switch envelope?.event {
                case .created(let room)?:
                    rooms.created(room, atMs: WallClock.nowMs())
                    // After the index has it: the creator's next `chats` here finds it.
                    if let request = envelope?.answers { requests.answered(request, by: room) }
                case .changed(let room)?:
                    rooms.changed(room)
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
