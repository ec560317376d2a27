import GeoChatBus
import Synchronization
import XCTest

/// `withDeadline` (how the gateway reads a request body): it gives up on time
/// and, unlike `bounded`, only returns once the operation has stopped.
final class DeadlineTests: XCTestCase {
    func testAnOperationPastItsDeadlineIsCancelledAndHasStoppedWhenItReturns() async {
        let running = Atomic<Bool>(false)
        do {
            _ = try await withDeadline(.milliseconds(50)) {
                running.store(true, ordering: .releasing)
                defer { running.store(false, ordering: .releasing) }
                try await Task.sleep(for: .seconds(10))  // a body that trickles in
                return 1
            }
            XCTFail("the deadline passed")
        } catch is DeadlineExceeded {
            XCTAssertFalse(running.load(ordering: .acquiring), "the operation still ran after the answer")
        } catch {
            XCTFail("unexpected \(error)")
        }
    }

    func testAQuickOperationGivesItsValueAndItsErrors() async throws {
        let value = try await withDeadline(.seconds(5)) { 42 }
        XCTAssertEqual(value, 42)
        struct Refused: Error {}
        do {
            _ = try await withDeadline(.seconds(5)) { () async throws -> Int in throw Refused() }
            XCTFail("the error was lost")
        } catch is Refused {}
    }
}
