import GeoChatBus
import XCTest

/// `Doorbell`: how idle loops sleep long and still start work at once.
final class DoorbellTests: XCTestCase {
    func testARingWakesAWaiterLongBeforeItsTimeout() async {
        let bell = Doorbell()
        let started = ContinuousClock.now
        async let waited: Void = bell.wait(upTo: .seconds(30))
        try? await Task.sleep(for: .milliseconds(50))
        bell.ring()
        await waited
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
    }

    func testARingWhileNobodyWaitsIsKeptForTheNextWaitOnce() async {
        let bell = Doorbell()
        bell.ring()
        bell.ring()
        let started = ContinuousClock.now
        await bell.wait(upTo: .seconds(30))  // the kept ring
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
        let second = ContinuousClock.now
        await bell.wait(upTo: .milliseconds(200))  // two rings were one
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - second, .milliseconds(200))
    }

    /// A loop that timed out must sleep again next time, not spin: a bell
    /// built on a stream that ends when its waiter is cancelled did (an
    /// idle expiry instance used 0.75 cores).
    func testEveryWaitAfterATimeoutWaitsAgain() async {
        let bell = Doorbell()
        for _ in 0..<3 {
            let started = ContinuousClock.now
            await bell.wait(upTo: .milliseconds(100))
            XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(100))
        }
        let started = ContinuousClock.now
        async let waited: Void = bell.wait(upTo: .seconds(30))
        try? await Task.sleep(for: .milliseconds(50))
        bell.ring()
        await waited
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5), "a ring still wakes it")
    }

    func testCancellingAWaiterEndsItsWait() async {
        let bell = Doorbell()
        let waiter = Task { await bell.wait() }
        try? await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        await waiter.value
    }
}
