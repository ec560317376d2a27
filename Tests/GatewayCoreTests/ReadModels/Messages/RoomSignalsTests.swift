import GeoChatDomain
import Testing

@testable import GatewayCore

/// What long polls and push subscribers wait on.
@Suite struct RoomSignalsTests {
    @Test func aRingWakesTheRoomsWaitersOnly() async {
        let signals = RoomSignals()
        let far = ContinuousClock.now + .seconds(3600)  // far past any stall of a loaded machine
        let seven = signals.register(7, until: far)
        let eight = signals.register(8, until: far)
        async let woken = signals.wait(seven)
        try? await Task.sleep(for: .milliseconds(50))
        signals.ring(7, .messages)
        #expect(await woken == .messages)
        #expect(signals.waiting == 1, "room 8's waiter still waits")
        signals.cancel(eight)
        #expect(signals.waiting == 0)
    }

    @Test func newsBetweenRegisteringAndWaitingIsNotLost() async {
        let signals = RoomSignals()
        let ticket = signals.register(7, until: .now + .seconds(60))
        signals.ring(7, .members)
        signals.ring(7, .messages)
        #expect(await signals.wait(ticket) == [.messages, .members])
        #expect(signals.waiting == 0)
    }

    @Test func aWaitEndsEmptyAtItsDeadline() async {
        let signals = RoomSignals(slotLength: .milliseconds(10))
        let ticket = signals.register(7, until: .now + .milliseconds(50))
        let sweeper = Task { await signals.expireDeadlines(every: .milliseconds(10)) }
        // Without the sweep the wait would never end: nil is that. The bound is generous because
        // the tests share two cores and their pool with slow suites (16 s was seen under CI).
        let outcome = await withTaskGroup(of: RoomSignals.News?.self) { group in
            group.addTask { await signals.wait(ticket) }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
        #expect(outcome == [], "the wait ended at its deadline, with no news")
        #expect(signals.waiting == 0)
        sweeper.cancel()
    }

    @Test func aCancelledWaiterEndsAndLeavesNothingBehind() async {
        let signals = RoomSignals()
        let ticket = signals.register(7, until: .now + .seconds(60))
        let waiting = Task { await signals.wait(ticket) }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        #expect(await waiting.value == [])
        #expect(signals.waiting == 0)
    }
}
