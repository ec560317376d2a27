import GeoChatBus
import GeoChatDomain
import Synchronization
import Testing

@testable import GatewayCore

/// Presence is a memory write; what a gateway publishes is bounded by time per
/// session, never by its requests; a refused batch is tried again.
@Suite struct PresenceTrackerTests {
    static let timeoutMs: Int64 = 60_000

    @Test func aSessionPollingEverySecondIsPublishedOncePerRefresh() {
        let presence = PresenceTracker(gateway: "g", timeoutMs: { Self.timeoutMs })
        let id = SessionID.random()
        var published = 0
        for second in 0..<120 as Range<Int64> {
            let now = 1_000_000 + second * 1000
            presence.seen(id, atMs: now)
            published += presence.takeDue(nowMs: now).count
        }
        #expect(presence.refreshMs == 20_000)
        #expect(published == 6, "120 s of polls, a refresh every 20 s")
        #expect(presence.lastSeenMs(id) == Int64(1_119_000))
    }

    @Test func batchesStayBoundedAndARefusedOneIsDueAgain() async {
        let presence = PresenceTracker(gateway: "g", timeoutMs: { Self.timeoutMs })
        let ids = (0..<(PresenceTracker.maxBatch + 5)).map { _ in SessionID.random() }
        for id in ids { presence.seen(id, atMs: 5_000) }
        let first = presence.takeDue(nowMs: 5_000)
        #expect(first.count == PresenceTracker.maxBatch)
        presence.publishFailed(first)
        let second = presence.takeDue(nowMs: 5_000)
        let third = presence.takeDue(nowMs: 5_000)
        #expect(second.count + third.count == ids.count, "the refused batch and the rest")
        #expect(Set(second + third) == Set(ids), "every session once")
        #expect(presence.takeDue(nowMs: 5_000).isEmpty)

        let events = RecordedEvents()
        events.refuse(true)
        let loop = Task { await presence.publishLoop(events: events, every: .milliseconds(10)) }
        presence.seen(ids[0], atMs: 5_000 + presence.refreshMs)
        try? await Task.sleep(for: .milliseconds(100))
        #expect(events.published(PresenceBatch.self).isEmpty)
        events.refuse(false)
        for _ in 0..<200 where events.published(PresenceBatch.self).isEmpty {
            try? await Task.sleep(for: .milliseconds(10))
        }
        loop.cancel()
        #expect(events.published(PresenceBatch.self).map(\.sessions) == [[ids[0]]], "retried until the broker took it")
    }

    @Test func theTableIsBoundedAndHoldsOnlyThisGatewaysSightings() {
        let presence = PresenceTracker(gateway: "g", timeoutMs: { Self.timeoutMs }, maxSessions: 3)
        let ids = (0..<5).map { _ in SessionID.random() }
        for (i, id) in ids.enumerated() { presence.seen(id, atMs: 10_000 + Int64(i) * 1000) }
        #expect(presence.isPresent(ids[0], nowMs: 70_000, timeoutMs: Self.timeoutMs))
        #expect(!presence.isPresent(ids[0], nowMs: 70_001, timeoutMs: Self.timeoutMs))
        presence.prune(olderThanMs: 0)
        #expect(presence.count == 3, "the longest silent go first")
        #expect(presence.lastSeenMs(ids[0]) == nil && presence.lastSeenMs(ids[4]) == 14_000)
        presence.prune(olderThanMs: 14_000)
        #expect(presence.count == 1)
        #expect(presence.takeDue(nowMs: 20_000) == [ids[4]])
    }

    /// A session first seen here, or back after a silence longer than the
    /// timeout, is marked; requests of it at the same moment wait for one
    /// mark; a session seen within the timeout, or just started, is not marked.
    @Test func aPossibleReturnIsMarkedOnceAndWaitedFor() async {
        let marks = Mutex<[Int64]>([])
        let gate = AsyncStream<Void>.makeStream()
        let presence = PresenceTracker(
            gateway: "g", timeoutMs: { Self.timeoutMs },
            markReturn: { _, seenAtMs, _ in
                marks.withLock { $0.append(seenAtMs) }
                for await _ in gate.stream { break }
                return true
            })
        let id = SessionID.random()
        let first = presence.seen(id, atMs: 100_000)
        let second = presence.seen(id, atMs: 100_001)
        #expect(first != nil && second == first, "both requests wait for one mark")
        gate.continuation.yield()
        await first?.value
        #expect(marks.withLock { $0 } == [100_000])
        #expect(presence.seen(id, atMs: 100_000 + Self.timeoutMs) == nil, "seen within the timeout")
        let back = presence.seen(id, atMs: 200_001 + Self.timeoutMs)
        #expect(back != nil, "back after a silence longer than the timeout")
        gate.continuation.yield()
        await back?.value
        #expect(marks.withLock { $0 } == [100_000, 200_001 + Self.timeoutMs])
        let started = SessionID.random()
        presence.started(started, atMs: 300_000)
        #expect(presence.seen(started, atMs: 300_500) == nil, "a new session has no memberships to mark")
    }
}
