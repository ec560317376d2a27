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

    /// The `<chats>` document of `rooms` (`RoomsDocument` writes it).
    public static func rooms(_ rooms: [RoomInfo]) -> String {
        var document = RoomsDocument(rooms: rooms.count)
        for room in rooms { document.append(room) }
        return String(decoding: document.finish(), as: UTF8.self)
    }

    /// A `<chats>` answer written room by room as the bytes of its body, and
    /// never made a `String` (which checks every byte again): an answer holds
    /// up to 500 rooms, and a string per piece, then the check, were most of
    /// the cost of a `chats` (docs/benchmarks.md).
    public struct RoomsDocument {
        private var out: [UInt8] = []

        public init(rooms: Int) {
            out.reserveCapacity(64 + rooms * 160)
            out.append(contentsOf: declaration.utf8)
            out.append(contentsOf: "<chats>\n".utf8)
        }

        /// A room from its parts: `topicUTF8` is the topic's bytes, well-formed UTF-8.
        public mutating func append(
            id: RoomID, position: MercatorPoint, zoom: ZoomLevel, topicUTF8: UnsafeBufferPointer<UInt8>
        ) {
            appendRoomElement(id: id, position: position, zoom: zoom, topicUTF8: topicUTF8, to: &out)
            out.append(UInt8(ascii: "\n"))
        }

        public mutating func append(_ room: RoomInfo) {
            appendRoomElement(room, to: &out)
            out.append(UInt8(ascii: "\n"))
        }

        public consuming func finish() -> [UInt8] {
            out.append(contentsOf: "</chats>\n".utf8)
            return out
        }
    }

    static func roomElement(_ room: RoomInfo) -> String {
        var out: [UInt8] = []
        appendRoomElement(room, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func appendRoomElement(_ room: RoomInfo, to out: inout [UInt8]) {
        var topic = room.topic
        topic.withUTF8 {
            appendRoomElement(id: room.id, position: room.position, zoom: room.zoom, topicUTF8: $0, to: &out)
        }
    }

    static func appendRoomElement(
        id: RoomID, position: MercatorPoint, zoom: ZoomLevel, topicUTF8: UnsafeBufferPointer<UInt8>,
        to out: inout [UInt8]
    ) {
        append("<chat><id>", to: &out)
        appendDecimal(id.rawValue, to: &out)
        append("</id><longitude>", to: &out)
        PlainDecimal.append(position.x, to: &out)
        append("</longitude><latitude>", to: &out)
        PlainDecimal.append(position.y, to: &out)
        append("</latitude><z>", to: &out)
        appendDecimal(Int64(zoom.value), to: &out)
        append("</z><topic>", to: &out)
        XMLEscaping.append(topicUTF8, to: &out)
        append("</topic></chat>", to: &out)
    }

    /// A literal's bytes, as they are (a `String`'s would be copied out of it first).
    private static func append(_ literal: StaticString, to out: inout [UInt8]) {
        literal.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// The digits of `value`, without a `String` in between: written last
    /// digit first into a buffer on the stack.
    static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }

    public static func messages(room: RoomID, _ messages: some Collection<ChatMessage>) -> String {
        var out = document(holding: messages.count)
        out += "<messages chatid=\""
        out += String(room)
        out += "\">\n"
        append(messages, to: &out)
        out += "</messages>\n"
        return out
    }

    /// The add/messages dialect wraps the same elements in `<chat>`.
    public static func lobbyMessages(_ messages: some Collection<ChatMessage>) -> String {
        var out = document(holding: messages.count)
        out += "<chat>\n"
        append(messages, to: &out)
        out += "</chat>\n"
        return out
    }

    /// The declaration, in room made once for a list of `count` messages
    /// (every idle poll answers an empty one: one allocation, not five).
    private static func document(holding count: Int) -> String {
        var out = ""
        out.reserveCapacity(declaration.utf8.count + 64 + count * 160)
        out += declaration
        return out
    }

    private static func append(_ messages: some Collection<ChatMessage>, to out: inout String) {
        for m in messages {
            out += messageElement(m)
            out += "\n"
        }
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
