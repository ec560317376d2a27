import GeoChatDomain
import Synchronization
import XCTest

@testable import GatewayCore

/// The token buckets, on a clock the test moves by hand.
final class RateLimiterTests: XCTestCase {
    final class FakeClock: Sendable {
        let ns = Mutex<UInt64>(1_000_000_000)
        func advance(seconds: Double) { ns.withLock { $0 += UInt64(seconds * 1e9) } }
        func now() -> UInt64 { ns.withLock { $0 } }
    }

    let a = SessionID("aaaaaaaaaaaaaaaaaaaaaaaaaa")!
    let b = SessionID("bbbbbbbbbbbbbbbbbbbbbbbbbb")!

    func limiter(_ settings: RateLimitSettings = .defaults) -> (RateLimiter, FakeClock) {
        let clock = FakeClock()
        return (RateLimiter(settings: settings, now: { clock.now() }), clock)
    }

    func say(_ session: SessionID) -> RateLimiter.Action { .say(session: session) }

    /// The `n`th room a session makes (the number only labels the call).
    func create(_ session: SessionID, _ n: Int) -> RateLimiter.Action { .create(session: session) }

    func testPostsBurstThenSustainedRateLikeSynapse() {
        let (limits, clock) = limiter()
        for i in 0..<10 {
            XCTAssertNil(limits.admit(say(a), address: "10.0.0.1"), "post \(i) of the burst")
            clock.advance(seconds: 0.2)  // the minimum interval between two posts
        }
        let refusal = limits.admit(say(a), address: "10.0.0.1")
        XCTAssertNotNil(refusal)
        XCTAssertLessThanOrEqual(refusal!.retryAfterSeconds, 5)
        XCTAssertNil(limits.admit(say(b), address: "10.0.0.1"), "another session has its own bucket")
        clock.advance(seconds: 5)
        XCTAssertNil(limits.admit(say(a), address: "10.0.0.1"), "0.2/s: one more after 5 s")
        XCTAssertNotNil(limits.admit(say(a), address: "10.0.0.1"))
    }

    func testMinimumIntervalBetweenPosts() {
        let (limits, clock) = limiter()
        XCTAssertNil(limits.admit(say(a), address: "10.0.0.1"))
        XCTAssertEqual(limits.admit(say(a), address: "10.0.0.1"), RateLimiter.Refusal(retryAfterSeconds: 1))
        clock.advance(seconds: 0.21)
        XCTAssertNil(limits.admit(say(a), address: "10.0.0.1"))
    }

    func testPerAddressLimitSpansSessions() {
        var settings = RateLimitSettings.defaults
        settings.postPerAddress = .init(perSecond: 1, capacity: 3)
        let (limits, _) = limiter(settings)
        let sessions = (0..<5).map { _ in SessionID.random() }
        XCTAssertEqual(
            sessions.map { limits.admit(say($0), address: "10.0.0.9") == nil }, [true, true, true, false, false])
        XCTAssertNil(limits.admit(say(SessionID.random()), address: "10.0.0.10"))
    }

    func testARefusedRequestTakesNoToken() {
        var settings = RateLimitSettings.defaults
        settings.postPerAddress = .init(perSecond: 1, capacity: 1)
        let (limits, clock) = limiter(settings)
        XCTAssertNil(limits.admit(say(a), address: "x"))
        clock.advance(seconds: 0.5)
        XCTAssertNotNil(limits.admit(say(b), address: "x"), "the address is empty")
        clock.advance(seconds: 0.5)
        // b's session bucket was not charged by the refusal: its whole burst is left.
        XCTAssertNil(limits.admit(say(b), address: "x"))
    }

    func testRoomsPerSessionPerHour() {
        var settings = RateLimitSettings.defaults
        settings.createPerSession = .init(perSecond: 0, capacity: 0)  // off: only the hourly cap counts
        settings.roomsPerSessionPerHour = 4
        let (limits, clock) = limiter(settings)
        for i in 0..<4 { XCTAssertNil(limits.admit(create(a, i), address: "x")) }
        let refusal = limits.admit(create(a, 5), address: "x")
        XCTAssertEqual(refusal?.retryAfterSeconds, 900, "a new room every 15 minutes at 4 per hour")
        clock.advance(seconds: 900)
        XCTAssertNil(limits.admit(create(a, 6), address: "x"))
    }

    func testStartsPerAddress() {
        var settings = RateLimitSettings.defaults
        settings.startPerAddress = .init(perSecond: 1, capacity: 2)
        let (limits, _) = limiter(settings)
        let start = RateLimiter.Action.start
        XCTAssertNil(limits.admit(start, address: "x"))
        XCTAssertNil(limits.admit(start, address: "x"))
        XCTAssertNotNil(limits.admit(start, address: "x"))
    }

    /// One bucket per session for the changes (`ChatActions` takes it for a join,
    /// a leave and a rename alike: `WriteLimitsTests`).
    func testChangesHaveABucketPerSession() {
        var settings = RateLimitSettings.defaults
        settings.changesPerSession = .init(perSecond: 1, capacity: 3)
        let (limits, clock) = limiter(settings)
        XCTAssertNil(limits.admit(.change(session: a), address: "x"))
        XCTAssertNil(limits.admit(.change(session: a), address: "x"))
        XCTAssertNil(limits.admit(.change(session: a), address: "x"))
        XCTAssertNotNil(limits.admit(.change(session: a), address: "x"))
        XCTAssertNil(limits.admit(.change(session: b), address: "x"), "another session has its own")
        clock.advance(seconds: 1)
        XCTAssertNil(limits.admit(.change(session: a), address: "x"))
    }

    /// Reads that reach PostgreSQL (pages older than the gateway holds) have a
    /// bucket per client address; polls answered from memory take nothing.
    func testHistoryReadsArePerAddress() {
        var settings = RateLimitSettings.defaults
        settings.historyPerAddress = .init(perSecond: 1, capacity: 2)
        let (limits, clock) = limiter(settings)
        XCTAssertNil(limits.admitCostlyRead(.history, address: "10.0.0.1"))
        XCTAssertNil(limits.admitCostlyRead(.history, address: "10.0.0.1"))
        let refusal = limits.admitCostlyRead(.history, address: "10.0.0.1")
        XCTAssertEqual(refusal?.retryAfterSeconds, 1)
        XCTAssertNil(limits.admitCostlyRead(.history, address: "10.0.0.2"))
        clock.advance(seconds: 1)
        XCTAssertNil(limits.admitCostlyRead(.history, address: "10.0.0.1"))
        settings.historyPerAddress = .init(perSecond: 0, capacity: 0)
        limits.update(settings)
        for _ in 0..<100 { XCTAssertNil(limits.admitCostlyRead(.history, address: "10.0.0.1"), "0 turns it off") }
    }

    /// An address that keeps starting sessions cannot multiply the
    /// per-session rate of joins, leaves and renames.
    func testChangesArePerAddressTooAcrossSessions() {
        var settings = RateLimitSettings.defaults
        settings.changesPerAddress = .init(perSecond: 1, capacity: 4)
        let (limits, _) = limiter(settings)
        let admitted = (0..<10).filter { _ in
            limits.admit(.change(session: SessionID.random()), address: "10.0.0.3") == nil
        }
        XCTAssertEqual(admitted.count, 4)
        XCTAssertNil(limits.admit(.change(session: SessionID.random()), address: "10.0.0.4"))
    }

    /// Guessed session ids use the lookup bucket up; an id that turns out to be
    /// a live session gives its token back, so real phones are never held back.
    func testSessionLookupsAreRefundedWhenTheSessionIsLive() {
        var settings = RateLimitSettings.defaults
        settings.sessionLookupPerAddress = .init(perSecond: 1, capacity: 3)
        settings.participantsPerAddress = .init(perSecond: 1, capacity: 1)
        let (limits, _) = limiter(settings)
        for _ in 0..<100 {
            XCTAssertNil(limits.admitCostlyRead(.sessionLookup, address: "nat"))
            limits.refund(.sessionLookup, address: "nat")  // a real phone's id
        }
        for _ in 0..<3 { XCTAssertNil(limits.admitCostlyRead(.sessionLookup, address: "nat")) }  // guesses
        XCTAssertNotNil(limits.admitCostlyRead(.sessionLookup, address: "nat"))
        limits.refund(.sessionLookup, address: "nat")
        XCTAssertNil(limits.admitCostlyRead(.sessionLookup, address: "nat"), "a refund is one token")
        XCTAssertNil(limits.admitCostlyRead(.participants, address: "nat"), "participants have their own bucket")
        XCTAssertNotNil(limits.admitCostlyRead(.participants, address: "nat"))
    }

    func testWideRegionQueriesHaveTheirOwnBucketPerAddress() {
        var settings = RateLimitSettings.defaults
        settings.wideRegionPerAddress = .init(perSecond: 1, capacity: 1)
        settings.historyPerAddress = .init(perSecond: 1, capacity: 1)
        let (limits, _) = limiter(settings)
        XCTAssertNil(limits.admitCostlyRead(.wideRegion, address: "x"))
        XCTAssertNotNil(limits.admitCostlyRead(.wideRegion, address: "x"))
        XCTAssertNil(limits.admitCostlyRead(.history, address: "x"), "history reads have their own bucket")
    }

    func testZeroTurnsALimitOff() {
        var settings = RateLimitSettings.defaults
        settings.postPerSession = .init(perSecond: 0, capacity: 10)
        settings.postPerAddress = .init(perSecond: 0, capacity: 0)
        let (limits, _) = limiter(settings)
        for _ in 0..<1000 { XCTAssertNil(limits.admit(say(a), address: "x")) }
        XCTAssertEqual(limits.bucketCount, 0)
    }

    func testIdleBucketsAreForgotten() {
        let (limits, clock) = limiter()
        for _ in 0..<100 { _ = limits.admit(say(SessionID.random()), address: "10.0.0.1") }
        XCTAssertEqual(limits.bucketCount, 101)
        clock.advance(seconds: 60)
        limits.prune()
        XCTAssertEqual(limits.bucketCount, 0)
    }

    func testLiveSettingsAnAdminStoredWinOverTheConfiguration() {
        let live = LiveSettings()
        XCTAssertEqual(RateLimitSettings.defaults.overridden(by: live), .defaults, "nothing stored: as configured")
        live.apply(SettingValue(name: "rate.post.per.min", value: 30, version: 1, updatedBy: "t", updatedAtMs: 0))
        live.apply(SettingValue(name: "rate.post.burst", value: 2, version: 2, updatedBy: "t", updatedAtMs: 0))
        live.apply(SettingValue(name: "rate.rooms.per.hour", value: 0, version: 3, updatedBy: "t", updatedAtMs: 0))
        let now = RateLimitSettings.defaults.overridden(by: live)
        XCTAssertEqual(now.postPerSession.perSecond, 0.5)
        XCTAssertEqual(now.postPerSession.capacity, 2)
        XCTAssertTrue(now.roomsPerSession.isOff, "a stored 0 turns the hourly room cap off")
        XCTAssertEqual(
            now.postPerAddress, RateLimitSettings.defaults.postPerAddress, "limits without a live setting stay")

        let (limits, clock) = limiter(now)
        XCTAssertNil(limits.admit(say(a), address: "10.0.0.1"))
        clock.advance(seconds: 0.2)
        XCTAssertNil(limits.admit(say(a), address: "10.0.0.1"))
        clock.advance(seconds: 0.2)
        XCTAssertNotNil(limits.admit(say(a), address: "10.0.0.1"), "the stored burst of 2 is spent")
    }

    func testALimitTurnedOffWhileItsBucketsLiveIsForgottenNotDividedByZero() {
        var settings = RateLimitSettings.defaults
        let (limits, clock) = limiter(settings)
        XCTAssertNil(limits.admit(say(a), address: "10.0.0.1"))
        settings.postPerSession.perSecond = 0  // an admin stores rate.post.per.min = 0
        limits.update(settings)
        clock.advance(seconds: 0.01)
        limits.prune()  // used to divide by the rate of 0 and trap
        XCTAssertEqual(limits.bucketCount, 1, "only the address bucket, still short of full, stays")
        for _ in 0..<20 { XCTAssertNil(limits.admit(say(a), address: "10.0.0.2"), "the session limit is off") }
    }
}
