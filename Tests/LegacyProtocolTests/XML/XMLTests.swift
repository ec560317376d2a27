import Foundation
import GeoChatDomain
import XCTest

@testable import GeoChatLegacyProtocol

#if canImport(FoundationXML)
    import FoundationXML
#endif

final class XMLTests: XCTestCase {
    func testPlainDecimalIsShortestAndNeverExponential() {
        let cases: [(Double, String)] = [
            (0, "0"), (1, "1"), (0.8, "0.8"), (0.42, "0.42"), (0.549845, "0.549845"), (1e-07, "0.0000001"),
            (1.25e-10, "0.000000000125"), (0.1 + 0.2, "0.30000000000000004"),
        ]
        for (value, text) in cases {
            XCTAssertEqual(PlainDecimal.format(value), text)
            XCTAssertEqual(Double(PlainDecimal.format(value)), value, "reads back")
        }
    }

    func testPlainDecimalAppendsAfterWhatTheBufferHolds() {
        for (value, text) in [(1e-07, "0.0000001"), (2.0, "2"), (0.5123456789012346, "0.5123456789012346"), (0, "0")] {
            var out = Array("<x>".utf8)
            PlainDecimal.append(value, to: &out)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), "<x>" + text)
        }
    }

    func testPlainDecimalRoundTripsRandomCoordinates() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            let value =
                Double.random(in: 0...1, using: &generator) / pow(10, Double(Int.random(in: 0...12, using: &generator)))
            let text = PlainDecimal.format(value)
            XCTAssertFalse(text.contains("e"), text)
            XCTAssertEqual(Double(text), value, text)
        }
    }

    func testRoomsDocumentIsExactlyTheContractsText() {
        let rooms = [
            RoomInfo(id: 5, position: MercatorPoint(x: 0.8, y: 0.42)!, zoom: ZoomLevel(8)!, topic: "a<b & 'c'\r"),
            RoomInfo(
                id: 1_234_567_890_123, position: MercatorPoint(x: 1.25e-10, y: 1)!, zoom: ZoomLevel(0)!,
                topic: "Zürich ☕"),
            RoomInfo(id: 7, position: MercatorPoint(x: 0, y: 0.30000000000000004)!, zoom: ZoomLevel(17)!, topic: ""),
        ]
        XCTAssertEqual(
            LegacyXML.rooms(rooms),
            "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<chats>\n"
                + "<chat><id>5</id><longitude>0.8</longitude><latitude>0.42</latitude><z>8</z><topic>a&lt;b &amp; &apos;c&apos;&#13;</topic></chat>\n"
                + "<chat><id>1234567890123</id><longitude>0.000000000125</longitude><latitude>1</latitude><z>0</z><topic>Zürich ☕</topic></chat>\n"
                + "<chat><id>7</id><longitude>0</longitude><latitude>0.30000000000000004</latitude><z>17</z><topic></topic></chat>\n"
                + "</chats>\n")
        XCTAssertEqual(LegacyXML.rooms([]), "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<chats>\n</chats>\n")
        XCTAssertEqual(
            LegacyXML.room(rooms[0]),
            LegacyXML.declaration
                + "<chat><id>5</id><longitude>0.8</longitude><latitude>0.42</latitude><z>8</z><topic>a&lt;b &amp; &apos;c&apos;&#13;</topic></chat>\n"
        )
    }

    func testDecimalDigitsAreIntegersText() {
        for value: Int64 in [0, 1, 9, 10, 99, 1_000_000, 1_234_567_890_123, .max, .min, -1, -42] {
            var out: [UInt8] = []
            LegacyXML.appendDecimal(value, to: &out)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), String(value))
        }
    }

    func testUTCTimestamp() {
        XCTAssertEqual(UTCTimestamp.format(millisecondsSince1970: 0), "1970-01-01 00:00:00")
        XCTAssertEqual(UTCTimestamp.format(millisecondsSince1970: 1_795_392_000_999), "2026-11-23 00:00:00")
        XCTAssertEqual(UTCTimestamp.format(millisecondsSince1970: 951_782_400_000), "2000-02-29 00:00:00")
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        for ms in stride(from: Int64(0), to: 4_102_444_800_000, by: 86_399_123_457) {
            XCTAssertEqual(
                UTCTimestamp.format(millisecondsSince1970: ms),
                formatter.string(from: Date(timeIntervalSince1970: Double(ms / 1000))))
        }
    }

    func testEscaping() {
        XCTAssertEqual(XMLEscaping.escape("plain"), "plain")
        XCTAssertEqual(XMLEscaping.escape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;")
        // A literal CR would reach the reader as LF (XML end-of-line handling).
        XCTAssertEqual(XMLEscaping.escape("a\r\nb\rc\td"), "a&#13;\nb&#13;c\td")
    }

    func testDocumentsAreWellFormed() throws {
        let message = ChatMessage(room: 5, id: 18, nick: "bob", text: "hi & <welcome> \"'", addedAt: 1_795_392_002_000)
        let room = RoomInfo(id: 5, position: MercatorPoint(x: 0.8, y: 0.42)!, zoom: ZoomLevel(8)!, topic: "a<b")
        let documents = [
            LegacyXML.sessionID(SessionID.random()), LegacyXML.success(), LegacyXML.success(id: 18),
            LegacyXML.error(ProtocolError(.badParam, "x < y & \"z\"")), LegacyXML.room(room),
            LegacyXML.rooms([room, room]),
            LegacyXML.rooms([]), LegacyXML.messages(room: 5, [message]), LegacyXML.lobbyMessages([message]),
            LegacyXML.participants(room: 5, nicks: ["Lydia", "bob"]),
        ]
        for document in documents {
            XCTAssertTrue(document.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"))
            let parser = XMLParser(data: Data(document.utf8))
            XCTAssertTrue(parser.parse(), "not well-formed: \(document)")
        }
        XCTAssertTrue(
            LegacyXML.messages(room: 5, [message]).contains(
                "<message added=\"2026-11-23 00:00:02\" id=\"18\"><user>bob</user><text>hi &amp; &lt;welcome&gt; &quot;&apos;</text></message>"
            ))
    }
}
