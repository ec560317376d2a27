import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Synchronization

/// The latest sign of life of each session, from every gateway's presence
/// batches: what `participants` needs beside the memberships, held by their
/// owner so that gateways read nothing per phone (docs/architecture.md,
/// "Sessions and presence"). Every rooms instance reads the whole presence
/// topic: its reads grow with phones and with rooms instances, never with
/// gateways.
///
/// Bounded: sightings older than `memoryMs` (above the longest presence
/// timeout an operator may set) are dropped at each prune, and at most
/// `maxSessions` are held, the longest silent dropped first. A new instance
/// knows a session once a gateway publishes it again (within a third of the
/// presence timeout); meanwhile the memberships' own last activity stands.
final class PresenceView: Sendable {
    private let seen = Mutex<[SessionID: Int64]>([:])
    let memoryMs: Int64
    let maxSessions: Int

    init(memoryMs: Int64 = 90_000_000, maxSessions: Int = 2_000_000) {
        self.memoryMs = memoryMs
        self.maxSessions = maxSessions
    }

    func record(_ batch: PresenceBatch) {
        seen.withLock { seen in
            for id in batch.sessions where seen[id].map({ $0 < batch.seenAtMs }) ?? true {
                seen[id] = batch.seenAtMs
            }
        }
    }

    func lastSeenMs(_ id: SessionID) -> Int64? { seen.withLock { $0[id] } }

    /// The members with their last activity moved to their latest sighting, where it is later.
    func withSightings(_ members: [Member]) -> [Member] {
        seen.withLock { seen in
            members.map { member in
                guard let sighted = seen[member.session], sighted > member.activeAtMs ?? 0 else { return member }
                var seenMember = member
                seenMember.activeAtMs = sighted
                return seenMember
            }
        }
    }

    var count: Int { seen.withLock { $0.count } }

    /// Forgets sightings before `nowMs - memoryMs`, then the oldest beyond `maxSessions`.
    func prune(nowMs: Int64) {
        seen.withLock { seen in
            let cutoff = nowMs - memoryMs
            seen = seen.filter { $0.value >= cutoff }
            guard seen.count > maxSessions else { return }
            for (id, _) in seen.sorted(by: { $0.value < $1.value }).prefix(seen.count - maxSessions) { seen[id] = nil }
        }
    }

    /// Reads the batches as they come, pruning once a minute.
    func follow(_ presence: KafkaConsumer) async {
        var prunedAt = ContinuousClock.now
        for await kafkaRecord in presence.records {
            if let batch = EventDecoding.decode(PresenceBatch.self, from: kafkaRecord) { record(batch) }
            if ContinuousClock.now - prunedAt > .seconds(60) {
                prune(nowMs: WallClock.nowMs())
                prunedAt = .now
            }
        }
    }
}
