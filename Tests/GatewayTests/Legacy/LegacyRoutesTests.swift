import GeoChatDomain
import GeoChatLegacyProtocol
import XCTest

@testable import Gateway
@testable import GatewayCore

final class LegacyRoutesTests: XCTestCase {
    func testPrefixSpellings() {
        XCTAssertEqual(LegacyRoutes.spellings(of: ""), [""])
        XCTAssertEqual(LegacyRoutes.spellings(of: "/geochat"), ["/geochat"])
        XCTAssertEqual(
            LegacyRoutes.spellings(of: "/~rost/geochat"), ["/~rost/geochat", "/%7Erost/geochat", "/%7erost/geochat"])
    }

    func testSessionHintIsOnlyAWellFormedID() throws {
        let id = "n7fheb2lk5pv8d873a32tg92k3"
        XCTAssertEqual(try FormParameters(query: "sessionid=" + id).sessionHint()?.value, id)
        XCTAssertNil(try FormParameters(query: "sessionid=nonsense").sessionHint())
        XCTAssertNil(try FormParameters(query: "sessionid=a&sessionid=b").sessionHint())
        XCTAssertNil(try FormParameters(query: "cmd=chats").sessionHint())
    }
}
