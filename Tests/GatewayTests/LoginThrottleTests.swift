import XCTest

@testable import Gateway

final class LoginThrottleTests: XCTestCase {
    func testFailuresBeyondTheLimitWaitForTheWindowToMove() async throws {
        let throttle = LoginThrottle(limit: 3, window: .milliseconds(300))
        for _ in 0..<3 {
            XCTAssertTrue(throttle.allowsAttempt)
            throttle.recordFailure()
        }
        XCTAssertFalse(throttle.allowsAttempt)
        try await Task.sleep(for: .milliseconds(400))
        XCTAssertTrue(throttle.allowsAttempt)
    }
}
