import GeoChatDomain
import XCTest

@testable import GeoChatLegacyProtocol

final class FormParametersTests: XCTestCase {
    func testDecodesPercentAndPlus() throws {
        let p = try FormParameters(query: "msg=hi+%26+welcome&nick=Lydia")
        XCTAssertEqual(try p.text("msg"), "hi & welcome")
        XCTAssertEqual(try p.text("nick"), "Lydia")
        XCTAssertNil(try p.text("absent"))
    }

    func testBodyWinsOverQuery() throws {
        let p = try FormParameters(query: "msg=fromquery", body: "msg=frombody")
        XCTAssertEqual(try p.text("msg"), "frombody")
    }

    func testConflictingAliasesAreBadParam() throws {
        let p = try FormParameters(query: "msg=a&text=b")
        XCTAssertThrowsError(try p.text("msg", "message", "text")) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .badParam)
        }
        let same = try FormParameters(query: "msg=a&text=a")
        XCTAssertEqual(try same.text("msg", "message", "text"), "a")
    }

    func testRepeatedNameWithDifferentValuesIsBadParam() throws {
        let p = try FormParameters(query: "chatid=1&chatid=2")
        XCTAssertThrowsError(try p.text("chatid")) { XCTAssertEqual(($0 as? ProtocolError)?.code, .badParam) }
        XCTAssertEqual(try FormParameters(query: "chatid=1&chatid=1").text("chatid"), "1")
    }

    func testRepeatsInTheQueryConflictEvenWhenTheBodyHasTheName() throws {
        let p = try FormParameters(query: "chatid=1&chatid=2", body: "chatid=3")
        XCTAssertThrowsError(try p.text("chatid")) { XCTAssertEqual(($0 as? ProtocolError)?.code, .badParam) }
        XCTAssertEqual(try FormParameters(query: "chatid=1&chatid=1", body: "chatid=3").text("chatid"), "3")
    }

    func testQueryStringAndBodyAreBounded() {
        let long = "pad=" + String(repeating: "a", count: Limits.maxQueryBytes)
        XCTAssertThrowsError(try FormParameters(query: long)) {
            XCTAssertEqual(($0 as? ProtocolError)?.code, .tooLarge)
        }
        XCTAssertThrowsError(try FormParameters(query: "", body: long)) {
            XCTAssertEqual(($0 as? ProtocolError)?.code, .tooLarge)
        }
    }

    func testBrokenPercentEncodingIsBadParam() {
        for query in ["msg=%", "msg=%4", "msg=%zz", "m%g=1"] {
            XCTAssertThrowsError(try FormParameters(query: query), query) {
                XCTAssertEqual(($0 as? ProtocolError)?.code, .badParam)
            }
        }
    }

    func testInvalidUTF8AndControlCharactersAreBadParam() throws {
        XCTAssertThrowsError(try FormParameters(query: "msg=%FF").text("msg")) {
            XCTAssertEqual(($0 as? ProtocolError)?.code, .badParam)
        }
        XCTAssertThrowsError(try FormParameters(query: "msg=a%01b").text("msg")) {
            XCTAssertEqual(($0 as? ProtocolError)?.code, .badParam)
        }
        // Unknown parameters are ignored, whatever they hold.
        XCTAssertEqual(try FormParameters(query: "junk=%FF&msg=ok").text("msg"), "ok")
    }

    func testParameterOverFourKiBIsTooLargeAfterDecoding() throws {
        let exactly = String(repeating: "a", count: Limits.maxParameterBytes)
        XCTAssertNoThrow(try FormParameters(query: "msg=" + exactly))
        XCTAssertThrowsError(try FormParameters(query: "msg=" + exactly + "a")) {
            XCTAssertEqual(($0 as? ProtocolError)?.code, .tooLarge)
        }
        // 2,000 encoded bytes "%C3%A9" decode to 4,000 bytes: still within the bound.
        let encoded = String(repeating: "%C3%A9", count: 2000)
        XCTAssertEqual(try FormParameters(query: "msg=" + encoded).text("msg")?.count, 2000)
    }

    func testTooManyParametersIsTooLarge() {
        let query = (0...Limits.maxParameterCount).map { "p\($0)=1" }.joined(separator: "&")
        XCTAssertThrowsError(try FormParameters(query: query)) {
            XCTAssertEqual(($0 as? ProtocolError)?.code, .tooLarge)
        }
    }

    func testEmptyPairsAreSkippedAndNamesMatchWhole() throws {
        let p = try FormParameters(query: "&&chatid=5&&past=17&", body: "&msg=%C3%A5+ok&")
        XCTAssertEqual(try p.text("chatid"), "5")
        XCTAssertEqual(try p.text("past"), "17")
        XCTAssertEqual(try p.text("msg"), "å ok")
        // A name is equal only whole: neither its prefix nor a longer name matches.
        XCTAssertNil(try p.text("chat"))
        XCTAssertNil(try p.text("chatidx"))
        XCTAssertFalse(p.has(""))
    }

    func testPresentButEmptyCountsAsPresent() throws {
        let p = try FormParameters(query: "msg=&flag")
        XCTAssertEqual(try p.text("msg"), "")
        XCTAssertEqual(try p.text("flag"), "")
    }
}
