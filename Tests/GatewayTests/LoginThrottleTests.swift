import XCTest

@testable import Gateway

final class LoginThrottleTests: XCTestCase {
    func testAttemptsCountFromTheirSendingAndBeyondTheLimitWaitForTheWindow() async throws {
        let throttle = LoginThrottle(limit: 3, window: .milliseconds(300))
        // A burst: only the limit is let through, before any answer came back.
        let admitted = (0..<10).compactMap { _ in throttle.admit() }
        XCTAssertEqual(admitted.count, 3)
        XCTAssertNil(throttle.admit())
        try await Task.sleep(for: .milliseconds(400))
        XCTAssertNotNil(throttle.admit())
    }

    func testAGrantedLoginIsNoFailure() {
        let throttle = LoginThrottle(limit: 2, window: .seconds(60))
        for _ in 0..<5 {
            guard let ticket = throttle.admit() else { return XCTFail("a granted login used up the limit") }
            throttle.succeeded(ticket)
        }
        XCTAssertNotNil(throttle.admit())
    }

    func testRefusalsAreAuditedOnceAWindowWithTheCountHeldBack() {
        let throttle = LoginThrottle(limit: 1, window: .seconds(60))
        XCTAssertEqual(throttle.refusalToAudit(), 0)
        XCTAssertNil(throttle.refusalToAudit())
        XCTAssertNil(throttle.refusalToAudit())
    }
}
