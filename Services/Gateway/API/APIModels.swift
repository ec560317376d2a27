import GatewayCore
import GeoChatDomain

/// The JSON API's bodies (docs/api.md; the schemas of openapi.json, checked by `OpenAPISpecTests`).
/// Places go out in both WGS 84 degrees and normalized Mercator values.
enum APIModels {
    struct Session: Encodable {
        var session: String
        var nick: String

        init(_ info: SessionInfo) {
            session = info.id.value
            nick = info.nick
        }
    }

    struct Room: Encodable {
        var id: RoomID
        var topic: String
        var zoom: Int
        var latitude: Double
        var longitude: Double
        var x: Double
        var y: Double

        init(_ room: RoomInfo) {
            let place = GeoPoint(room.position)
            id = room.id
            topic = room.topic
            zoom = room.zoom.value
            // To 1e-10 degrees (about 0.01 mm): what was sent comes back as sent, not with float noise.
            latitude = (place.latitude * 1e10).rounded() / 1e10
            longitude = (place.longitude * 1e10).rounded() / 1e10
            x = room.position.x
            y = room.position.y
        }
    }

    struct Rooms: Encodable {
        var rooms: [Room]
    }

    struct NearbyRoom: Encodable {
        var room: Room
        /// Great-circle metres from the query's point.
        var distance: Double
        /// Degrees clockwise from north, from the query's point to the room.
        var bearing: Double

        init(_ found: GeoChatDomain.NearbyRoom) {
            room = Room(found.room)
            distance = (found.distanceMetres * 10).rounded() / 10
            bearing = (found.bearingDegrees * 10).rounded() / 10
        }
    }

    struct NearbyRooms: Encodable {
        var rooms: [NearbyRoom]
    }

    struct Message: Encodable {
        var id: MessageID
        var room: RoomID
        var nick: String
        var text: String
        /// RFC 3339, UTC, to the second.
        var addedAt: String

        init(_ message: ChatMessage) {
            id = message.id
            room = message.room
            nick = message.nick
            text = message.text
            addedAt = UTCTimestamp.rfc3339(millisecondsSince1970: message.addedAt)
        }
    }

    /// Push: messages an operator removed, which the client takes off its screen.
    struct Removed: Encodable {
        var room: RoomID
        var ids: [MessageID]
    }

    struct Messages: Encodable {
        var room: RoomID
        var messages: [Message]
    }

    /// A page of a transcript; `next` is the `after` of the following page (null at the end).
    struct Transcript: Encodable {
        var room: RoomID
        var messages: [Message]
        var next: MessageID?

        enum CodingKeys: CodingKey { case room, messages, next }

        /// `next` is always there: null on the last page (the encoder would leave a nil out).
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(room, forKey: .room)
            try container.encode(messages, forKey: .messages)
            if let next { try container.encode(next, forKey: .next) } else { try container.encodeNil(forKey: .next) }
        }
    }

    struct Participants: Encodable {
        var room: RoomID
        var participants: [String]
    }

    // Request bodies: every field optional, so a missing one gets a clear error.

    struct StartSession: Decodable {
        var nick: String?
    }

    struct Rename: Decodable {
        var nick: String?
    }

    struct CreateRoom: Decodable {
        var latitude: Double?
        var longitude: Double?
        var x: Double?
        var y: Double?
        var zoom: Int?
        var topic: String?
    }

    struct Say: Decodable {
        var text: String?
    }
}
