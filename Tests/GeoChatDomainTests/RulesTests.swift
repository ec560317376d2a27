import GeoChatDomain
import XCTest

final class RulesTests: XCTestCase {
    func testNicknameRule() {
        for good in ["Lydia", "b", "a_1", String(repeating: "x", count: 32)] { XCTAssertNotNil(Nickname(good), good) }
        for bad in ["", "1abc", "_a", "a-b", "a b", "Grüße", String(repeating: "x", count: 33)] {
            XCTAssertNil(Nickname(bad), bad)
        }
    }

    func testSessionIDsAreWellFormedAndDistinct() {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = SessionID.random()
            XCTAssertEqual(id.value.count, 26)
            XCTAssertNotNil(SessionID(id.value))
            seen.insert(id.value)
        }
        XCTAssertEqual(seen.count, 1000)
        XCTAssertNil(SessionID("n7fheb2lk5pv8d873a32tg92kw"))  // 'w' is outside 0-9a-v
        XCTAssertNil(SessionID("short"))
        XCTAssertFalse(SessionID.random().description.contains(SessionID.random().value))
    }

    func testChatTextTrimsAndCountsCodePoints() {
        XCTAssertEqual(ChatText.validate("  hi \n", length: 1...5), .success("hi"))
        XCTAssertEqual(ChatText.validate(" \t ", length: 1...5), .failure(.empty))
        XCTAssertEqual(ChatText.validate("👋👋👋", length: 1...3), .success("👋👋👋"))
        XCTAssertEqual(ChatText.validate("👋👋👋👋", length: 1...3), .failure(.tooLong))
    }

    func testXMLSafety() {
        XCTAssertTrue(ChatText.isXMLSafe("tab\tnewline\n <&> 👋"))
        XCTAssertFalse(ChatText.isXMLSafe("bell\u{07}"))
        XCTAssertFalse(ChatText.isXMLSafe("\u{FFFE}"))
    }

    func testMercatorBoxIncludesEdgesInAnyCornerOrder() {
        let box = MercatorBox(MercatorPoint(x: 0.8, y: 1)!, MercatorPoint(x: 0, y: 0.4)!)
        XCTAssertTrue(box.contains(MercatorPoint(x: 0.8, y: 0.42)!))
        XCTAssertTrue(box.contains(MercatorPoint(x: 0, y: 0.4)!))
        XCTAssertFalse(box.contains(MercatorPoint(x: 0.8000001, y: 0.5)!))
        XCTAssertNil(MercatorPoint(x: .nan, y: 0.5))
        XCTAssertNil(MercatorPoint(x: 1.0000001, y: 0.5))
    }

    func testMercatorFromDegrees() throws {
        let equator = try XCTUnwrap(MercatorPoint(longitude: 0, latitude: 0))
        XCTAssertEqual(equator.x, 0.5, accuracy: 1e-12)
        XCTAssertEqual(equator.y, 0.5, accuracy: 1e-12)
        let north = try XCTUnwrap(MercatorPoint(longitude: -180, latitude: 85.0511))
        XCTAssertEqual(north.x, 0, accuracy: 1e-12)
        XCTAssertEqual(north.y, 0, accuracy: 1e-5)
    }

    func testErrorStatuses() {
        XCTAssertEqual(ProtocolError.Code.badParam.httpStatus, 400)
        XCTAssertEqual(ProtocolError.Code.invalidSession.httpStatus, 403)
        XCTAssertEqual(ProtocolError.Code.noSuchChat.httpStatus, 404)
        XCTAssertEqual(ProtocolError.Code.tooLarge.httpStatus, 413)
        XCTAssertEqual(ProtocolError.Code.rateLimited.httpStatus, 429)
        XCTAssertEqual(ProtocolError.Code.unavailable.httpStatus, 503)
    }
}
