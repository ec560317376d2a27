import Testing

@testable import GeoChatBus

/// A requester's reply readers rest while no request waits and wake before the next one.
@Suite struct ReplyFetchingTests {
    let start = ContinuousClock.now

    @Test func readersRestOnlyOnceReadyQuietAndWithNothingWaiting() {
        var fetching = ReplyFetching(quiet: .seconds(2), now: start)
        #expect(
            fetching.tick(at: start + .seconds(3), waiting: 0, ready: false) == .none, "not before the reply path works"
        )
        #expect(fetching.tick(at: start + .seconds(1), waiting: 0, ready: true) == .none, "not within the quiet")
        #expect(fetching.tick(at: start + .seconds(3), waiting: 1, ready: true) == .none, "not while a request waits")
        #expect(fetching.tick(at: start + .seconds(3), waiting: 0, ready: true) == .rest)
        #expect(fetching.resting)
        #expect(fetching.tick(at: start + .seconds(9), waiting: 0, ready: true) == .none, "rested once")
    }

    @Test func theFirstRequestAfterARestWakesTheReadersOnce() {
        var fetching = ReplyFetching(quiet: .seconds(2), now: start)
        _ = fetching.tick(at: start + .seconds(2), waiting: 0, ready: true)
        #expect(fetching.requestStarting(at: start + .seconds(60)) == .wake)
        #expect(fetching.requestStarting(at: start + .seconds(60)) == .none, "already awake")
        #expect(!fetching.resting)
    }

    @Test func theQuietCountsFromTheLastRequestsEnd() {
        var fetching = ReplyFetching(quiet: .seconds(2), now: start)
        _ = fetching.requestStarting(at: start + .seconds(1))
        fetching.requestEnded(at: start + .seconds(5))
        #expect(fetching.tick(at: start + .seconds(6), waiting: 0, ready: true) == .none, "a request ended 1 s ago")
        #expect(fetching.tick(at: start + .seconds(7), waiting: 0, ready: true) == .rest)
    }
}
