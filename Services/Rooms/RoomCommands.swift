import Foundation
import GeoChatDomain
import GeoChatKafka
import GeoChatRuntime
import Logging

/// Runs rooms commands: change the tables, publish the event, answer.
struct RoomCommands: Sendable {
    let store: RoomStore
    let events: EventPublisher
    let logger: Logger

    func handle(_ envelope: RequestEnvelope<RoomsCommand>) async -> Result<ReplyBody, ProtocolError> {
        await answer(envelope, logger: logger) {
            switch envelope.command {
            case .create(let session, let position, let zoom, let rawTopic):
                let topic = try ChatText.validate(rawTopic, length: Limits.topicLength).get(field: "topic")
                let (room, isNew) = try await store.create(session: session, position: position, zoom: zoom, topic: topic)
                if isNew {
                    try await publish(.created(room), room.id)
                    logger.info("room created", metadata: ["room": "\(room.id)", "session": "\(session)", "z": "\(zoom.value)"])
                }
                return .room(room)

            case .region(let query):
                return .rooms(try await store.region(query))

            case .lookup(let id):
                guard let room = try await store.find(id) else { throw ProtocolError.noSuchChat }
                return .room(room)

            case .lobby:
                guard let room = try await store.lobby() else { throw ProtocolError.noSuchChat }
                return .room(room)

            case .join(let room, let session, let nick):
                guard try await store.join(room, session: session, nick: nick) else { throw ProtocolError.noSuchChat }
                try await publish(.joined(room: room, session: session, nick: nick), room)
                return .done

            case .leave(let room, let session):
                guard try await store.leave(room, session: session) else { throw ProtocolError.noSuchChat }
                try await publish(.left(room: room, session: session), room)
                return .done

            case .members(let room):
                guard let members = try await store.members(room) else { throw ProtocolError.noSuchChat }
                return .members(members)

            case .idleRooms(let before, let limit):
                return .roomIDs(try await store.idleRooms(before: Self.date(before), limit: min(limit, 10_000)))

            case .removeIdle(let room, let before):
                let removed = try await store.removeIfIdle(room, before: Self.date(before), reason: "idle")
                if removed {
                    try await publish(.removed(room: room, reason: "idle"), room)
                    logger.info("room removed", metadata: ["room": "\(room)", "reason": "idle"])
                }
                return .removed(removed)

            case .idleRoomsAfter(let after, let before, let limit):
                let page = min(max(limit, 1), Limits.maxRoomBatch)
                return .roomIDs(try await store.idleRooms(after: after, before: Self.date(before), limit: page))

            case .removeIdleRooms(let rooms, let before, let reason):
                guard rooms.count <= Limits.maxRoomBatch else {
                    throw ProtocolError.bad("rooms", "holds more than \(Limits.maxRoomBatch) ids")
                }
                guard (1...100).contains(reason.count) else { throw ProtocolError.bad("reason", "must be 1 to 100 characters") }
                let outcome = try await store.removeIdleRooms(rooms, before: Self.date(before), reason: reason)
                if !outcome.all.isEmpty {
                    // All of them, not only the new ones: a retry may follow a publish that never happened.
                    try await publish(.removedRooms(rooms: outcome.all, reason: reason), outcome.all[0])
                }
                logger.info(
                    "rooms removed", metadata: ["count": "\(outcome.new.count)", "asked": "\(rooms.count)", "reason": "\(reason)"])
                return .roomIDs(outcome.all)

            case .admin(let command):
                return try await handleAdmin(command)
            }
        }
    }

    func publish(_ event: RoomEvent, _ room: RoomID) async throws {
        try await events.publish(event, schema: EventSchemas.room, topic: Topics.roomEvents, key: String(room))
    }

    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
}
