import GeoChatDomain
import Logging
import Synchronization
import XCTest

@testable import MessagingService

final class UnpublishedMessagesTests: XCTestCase {
    private func stored(_ id: MessageID) -> MessageStored {
        MessageStored(message: ChatMessage(room: 7, id: id, nick: "bob", text: "m\(id)", addedAt: 0), author: nil)
    }

    /// A broker that refuses the first attempts: everything goes out once it is back, in order, once each.
    func testRelayPublishesEverythingInOrderOnceTheBrokerTakesIt() async throws {
        let unpublished = UnpublishedMessages()
        for id in MessageID(1)...5 { unpublished.add(stored(id)) }
        let published = Mutex<[MessageID]>([])
        let refusals = Mutex(3)
        let relay = Task {
            await unpublished.relay(every: .milliseconds(10), logger: Logger(label: "test")) { event in
                let refuse = refusals.withLock { left -> Bool in
                    defer { left -= 1 }
                    return left > 0
                }
                if refuse { throw CancellationError() }
                published.withLock { $0.append(event.message.id) }
            }
        }
        for _ in 0..<200 where published.withLock({ $0.count }) < 5 { try await Task.sleep(for: .milliseconds(10)) }
        unpublished.add(stored(6))
        for _ in 0..<200 where published.withLock({ $0.count }) < 6 { try await Task.sleep(for: .milliseconds(10)) }
        relay.cancel()
        XCTAssertEqual(published.withLock { $0 }, [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(unpublished.count, 0)
    }

    func testHoldsAtMostItsCapacityDroppingTheOldest() {
        let unpublished = UnpublishedMessages()
        for id in 1...Int64(UnpublishedMessages.capacity + 3) { unpublished.add(stored(id)) }
        XCTAssertEqual(unpublished.count, UnpublishedMessages.capacity)
    }
}
