import XCTest

@testable import Gateway
@testable import GatewayCore

final class LoginThrottleTests: XCTestCase {
    func testAttemptsCountFromTheirSendingAndBeyondTheLimitWaitForTheWindow() async throws {
        let throttle = LoginThrottle(limit: 3, window: .milliseconds(300))
        // A burst: only the limit is let through, before any answer came back.
        let admitted = (0..<10).compactMap { _ in throttle.admit(address: "10.0.0.1") }
        XCTAssertEqual(admitted.count, 3)
        XCTAssertNil(throttle.admit(address: "10.0.0.1"))
        try await Task.sleep(for: .milliseconds(400))
        XCTAssertNotNil(throttle.admit(address: "10.0.0.1"))
    }

    func testAGrantedLoginIsNoFailure() {
        let throttle = LoginThrottle(limit: 2, window: .seconds(60))
        for _ in 0..<5 {
            guard let ticket = throttle.admit(address: "10.0.0.1") else {
                return XCTFail("a granted login used up the limit")
            }
            throttle.succeeded(ticket)
        }
        XCTAssertNotNil(throttle.admit(address: "10.0.0.1"))
    }

    /// Someone failing on purpose uses up their own address's attempts, not
    /// an admin's elsewhere (issue 26: 30 junk logins a minute used to block
    /// every login through the gateway).
    func testFailuresFromOneAddressDoNotHoldBackAnother() {
        let throttle = LoginThrottle(limit: 3, window: .seconds(60))
        for _ in 0..<50 { _ = throttle.admit(address: "198.51.100.66") }
        XCTAssertNil(throttle.admit(address: "198.51.100.66"))
        guard let admin = throttle.admit(address: "10.0.0.7") else {
            return XCTFail("an admin elsewhere was held back")
        }
        throttle.succeeded(admin)
        XCTAssertNotNil(throttle.admit(address: "10.0.0.7"))
    }

    func testRecentlyGrantedTokensAreKnownForAMinuteAndForgottenWhenRefused() {
        let granted = RecentlyGranted()
        XCTAssertFalse(granted.contains("a"))
        granted.insert("a")
        XCTAssertTrue(granted.contains("a"))
        granted.remove("a")
        XCTAssertFalse(granted.contains("a"), "a revoked token goes back under the limit")
    }

    func testRefusalsAreAuditedOnceAWindowWithTheCountHeldBack() {
        let throttle = LoginThrottle(limit: 1, window: .seconds(60))
        XCTAssertEqual(throttle.refusalToAudit(), 0)
        XCTAssertNil(throttle.refusalToAudit())
        XCTAssertNil(throttle.refusalToAudit())
    }
}
