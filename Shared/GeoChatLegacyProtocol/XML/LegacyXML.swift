import GeoChatDomain
/// The documents of the legacy protocol (contract 3, 4 and 6). Every value that
/// reaches the output passes through `XMLEscaping` here and nowhere else.
public enum LegacyXML {
    public static let declaration = "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"
    public static let contentType = "text/xml; charset=utf-8"

    public static func sessionID(_ id: SessionID) -> String {
        declaration + "<sessionid>" + id.value + "</sessionid>\n"
    }

    public static func success() -> String { declaration + "<success />\n" }

    public static func success(id: MessageID) -> String {
        declaration + "<success id=\"" + String(id) + "\" />\n"
    }

    public static func error(_ error: ProtocolError) -> String {
        declaration + "<error code=\"" + error.code.rawValue + "\">" + XMLEscaping.escape(error.text) + "</error>\n"
    }

    public static func room(_ room: RoomInfo) -> String {
        declaration + roomElement(room) + "\n"
    }

    public static func rooms(_ rooms: [RoomInfo]) -> String {
        var out = declaration + "<chats>\n"
        for room in rooms { out += roomElement(room) + "\n" }
        return out + "</chats>\n"
    }

    static func roomElement(_ room: RoomInfo) -> String {
        "<chat><id>" + String(room.id) + "</id><longitude>" + PlainDecimal.format(room.position.x)
            + "</longitude><latitude>" + PlainDecimal.format(room.position.y) + "</latitude><z>"
            + String(room.zoom.value) + "</z><topic>" + XMLEscaping.escape(room.topic) + "</topic></chat>"
    }

    public static func messages(room: RoomID, _ messages: some Collection<ChatMessage>) -> String {
        var out = declaration + "<messages chatid=\"" + String(room) + "\">\n"
        for m in messages { out += messageElement(m) + "\n" }
        return out + "</messages>\n"
    }

    /// The add/messages dialect wraps the same elements in `<chat>`.
    public static func lobbyMessages(_ messages: some Collection<ChatMessage>) -> String {
        var out = declaration + "<chat>\n"
        for m in messages { out += messageElement(m) + "\n" }
        return out + "</chat>\n"
    }

    static func messageElement(_ m: ChatMessage) -> String {
        "<message added=\"" + UTCTimestamp.format(millisecondsSince1970: m.addedAt) + "\" id=\"" + String(m.id)
            + "\"><user>" + XMLEscaping.escape(m.nick) + "</user><text>" + XMLEscaping.escape(m.text)
            + "</text></message>"
    }

    public static func participants(room: RoomID, nicks: [String]) -> String {
        var out = declaration + "<participants chatid=\"" + String(room) + "\">"
        for nick in nicks { out += "<user>" + XMLEscaping.escape(nick) + "</user>" }
        return out + "</participants>\n"
    }
}
