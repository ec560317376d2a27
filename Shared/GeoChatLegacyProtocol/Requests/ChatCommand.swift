import GeoChatDomain

/// The GeoChat v5 commands of `/chat.php` (contract 3).
public enum ChatCommand: Sendable, Equatable {
    case start(nick: Nickname)
    case chats(RegionQuery)
    case create(session: SessionID, position: MercatorPoint, zoom: ZoomLevel, topic: RoomTopic)
    case join(session: SessionID, room: RoomID)
    case leave(session: SessionID, room: RoomID)
    case say(session: SessionID, room: RoomID, text: MessageText)
    /// `waitSeconds` (0…25, an extension the phones never send): an answer
    /// that would be empty waits up to that long for the room's next message.
    case messages(room: RoomID, past: MessageID, limit: Int, session: SessionID?, waitSeconds: Int = 0)
    case participants(room: RoomID)
    case nick(session: SessionID, nick: Nickname)
    case end(session: SessionID)
}

extension ChatCommand {
    /// The command's name, as `cmd` spells it (an alias by its first spelling):
    /// its label in the request metrics. A switch, not reflection: `Mirror`
    /// demangles the payload's types on every call, and profiling the poll path
    /// showed it as over half of a poll's CPU time.
    public var name: String {
        switch self {
        case .start: "start"
        case .chats: "chats"
        case .create: "create"
        case .join: "join"
        case .leave: "leave"
        case .say: "say"
        case .messages: "messages"
        case .participants: "participants"
        case .nick: "nick"
        case .end: "end"
        }
    }

    /// The session the command names, if any: the request's sign of life
    /// (read once; `FormParameters.sessionHint` serves commands that name none).
    public var session: SessionID? {
        switch self {
        case .create(let session, _, _, _), .join(let session, _), .leave(let session, _), .say(let session, _, _),
            .nick(let session, _), .end(let session):
            session
        case .messages(_, _, _, let session, _): session
        case .start, .chats, .participants: nil
        }
    }

    /// Reads a `/chat.php` request. Checks run in the order a client would fix
    /// them: version, command, then each parameter as the contract lists them.
    public static func parse(_ p: FormParameters, roomCap: Int) throws(ProtocolError) -> ChatCommand {
        if let version = try p.text("v"), version != "5" {
            throw ProtocolError(.unsupportedVersion, "protocol version \(version) is not supported; use v=5")
        }
        guard let command = try p.text("cmd") else { throw .missing("cmd") }
        switch command {
        case "start":
            return .start(nick: try p.nickname("nick"))
        case "chats":
            let a = try p.point(x: ["lon1"], y: ["lat1"])
            let b = try p.point(x: ["lon2"], y: ["lat2"])
            let minZ = try p.zoom("minz")
            let maxZ = try p.zoom("maxz")
            guard minZ <= maxZ else { throw .bad("minz", "is greater than maxz") }
            return .chats(RegionQuery(box: MercatorBox(a, b), zooms: minZ.value...maxZ.value, cap: roomCap))
        case "create":
            let session = try p.session()
            let position = try p.point(x: ["lon", "longitude"], y: ["lat", "latitude"])
            let zoom = try p.zoom("z")
            let topic = try p.checked(RoomTopic.self, ["topic"])
            return .create(session: session, position: position, zoom: zoom, topic: topic)
        case "join":
            return .join(session: try p.session(), room: try p.room())
        case "leave":
            return .leave(session: try p.session(), room: try p.room())
        case "say":
            let session = try p.session()
            let room = try p.room()
            let text = try p.checked(MessageText.self, ["msg", "message", "text"])
            return .say(session: session, room: room, text: text)
        case "messages":
            let room = try p.room()
            let past = try p.past()
            let limit = try p.limit()
            let session = p.has("sessionid") ? try p.session() : nil
            return .messages(room: room, past: past, limit: limit, session: session, waitSeconds: try p.wait())
        case "participants":
            return .participants(room: try p.room())
        case "nick":
            return .nick(session: try p.session(), nick: try p.nickname("nick"))
        case "end", "logout", "quit":
            return .end(session: try p.session())
        default:
            throw ProtocolError(.unknownCommand, "unknown command '\(command)'")
        }
    }
}
