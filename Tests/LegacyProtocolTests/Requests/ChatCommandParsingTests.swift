import GeoChatDomain
import XCTest

@testable import GeoChatLegacyProtocol

final class ChatCommandParsingTests: XCTestCase {
    let session = "n7fheb2lk5pv8d873a32tg92k3"

    func parse(_ query: String, body: String = "") throws -> ChatCommand {
        try ChatCommand.parse(try FormParameters(query: query, body: body), roomCap: 500)
    }

    func code(_ query: String) -> ProtocolError.Code? {
        do {
            _ = try parse(query)
            return nil
        } catch { return (error as? ProtocolError)?.code }
    }

    func testFieldExampleChats() throws {
        guard case .chats(let q) = try parse("v=5&cmd=chats&lon1=0&lat1=0.4&lon2=0.8&lat2=1&minz=4&maxz=10") else {
            return XCTFail()
        }
        XCTAssertEqual(q.box, MercatorBox(MercatorPoint(x: 0, y: 0.4)!, MercatorPoint(x: 0.8, y: 1)!))
        XCTAssertEqual(q.zooms, 4...10)
        XCTAssertEqual(q.cap, 500)
    }

    func testAliasesAndDefaults() throws {
        XCTAssertEqual(
            try parse("cmd=create&sessionid=\(session)&longitude=0.5&latitude=0.25&z=3&topic=%20Kista%20"),
            .create(
                session: SessionID(session)!, position: MercatorPoint(x: 0.5, y: 0.25)!, zoom: ZoomLevel(3)!,
                topic: try RoomTopic(checking: "Kista")))
        XCTAssertEqual(
            try parse("cmd=say&sessionid=\(session)&chatid=5&text=hi"),
            .say(session: SessionID(session)!, room: 5, text: try MessageText(checking: "hi")))
        XCTAssertEqual(try parse("cmd=messages&chatid=5"), .messages(room: 5, past: 0, limit: 50, session: nil))
        XCTAssertEqual(
            try parse("cmd=messages&chatid=5&limit=1000&past=7"), .messages(room: 5, past: 7, limit: 200, session: nil))
        XCTAssertEqual(try parse("cmd=quit&sessionid=\(session)"), .end(session: SessionID(session)!))
        XCTAssertEqual(try parse("cmd=logout&sessionid=\(session)&t=1700000000"), .end(session: SessionID(session)!))
    }

    func testErrors() {
        XCTAssertEqual(code("v=4&cmd=start&nick=a"), .unsupportedVersion)
        XCTAssertEqual(code("v=5"), .missingParam)
        XCTAssertEqual(code("cmd=dance"), .unknownCommand)
        XCTAssertEqual(code("cmd=start"), .missingParam)
        XCTAssertEqual(code("cmd=start&nick="), .invalidNick)
        XCTAssertEqual(code("cmd=start&nick=1a"), .invalidNick)
        XCTAssertEqual(code("cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1&minz=5&maxz=4"), .badParam)
        XCTAssertEqual(code("cmd=chats&lon1=nan&lat1=0&lon2=1&lat2=1&minz=1&maxz=4"), .badParam)
        XCTAssertEqual(code("cmd=chats&lon1=inf&lat1=0&lon2=1&lat2=1&minz=1&maxz=4"), .badParam)
        XCTAssertEqual(code("cmd=chats&lon1=0x1p-3&lat1=0&lon2=1&lat2=1&minz=1&maxz=4"), .badParam)
        XCTAssertEqual(code("cmd=chats&lon1=1.5&lat1=0&lon2=1&lat2=1&minz=1&maxz=4"), .badParam)
        XCTAssertEqual(code("cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1&minz=1&maxz=18"), .badParam)
        XCTAssertEqual(code("cmd=chats&lon1=0&lat1=0&lon2=1&lat2=1&minz=2.5&maxz=4"), .badParam)
        XCTAssertEqual(code("cmd=say&sessionid=\(session)&chatid=5&msg=%20%20"), .empty)
        XCTAssertEqual(
            code("cmd=say&sessionid=\(session)&chatid=5&msg=" + String(repeating: "a", count: 501)), .tooLong)
        XCTAssertEqual(
            code("cmd=say&sessionid=\(session)&chatid=5&msg=" + String(repeating: "a", count: 5000)), .tooLarge)
        XCTAssertEqual(code("cmd=say&sessionid=\(session)&chatid=5&msg=a&text=b"), .badParam)
        XCTAssertEqual(code("cmd=say&sessionid=nope&chatid=5&msg=a"), .invalidSession)
        XCTAssertEqual(code("cmd=say&sessionid=\(session)&chatid=five&msg=a"), .badParam)
        XCTAssertEqual(code("cmd=messages&chatid=5&limit=0"), .badParam)
        XCTAssertEqual(code("cmd=messages&chatid=5&past=-1"), .badParam)
        XCTAssertEqual(
            code("cmd=create&sessionid=\(session)&lon=0.5&lat=0.5&z=3&topic=" + String(repeating: "t", count: 101)),
            .tooLong)
    }

    func testLobbyDialect() throws {
        XCTAssertEqual(
            try LegacyRequest.parseLobbyPost(try FormParameters(query: "", body: "user=jack&message=This+is+a+test")),
            .lobbyPost(user: "jack", message: try MessageText(checking: "This is a test")))
        XCTAssertThrowsError(
            try LegacyRequest.parseLobbyPost(
                try FormParameters(query: "user=jack&message=" + String(repeating: "m", count: 256))))
        XCTAssertEqual(
            try LegacyRequest.parseLobbyMessages(try FormParameters(query: "past=17")), .lobbyMessages(past: 17))
    }
}
