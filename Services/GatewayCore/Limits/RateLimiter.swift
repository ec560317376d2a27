import GeoChatDomain
import Synchronization

/// Token-bucket limits on what abusers repeat: posts, room creation, session
/// starts, joins, leaves and renames, per session and per client address; and
/// the reads that cost far more than a poll (`ChatClient`), per client
/// address: every public request that reaches Kafka or PostgreSQL is bounded
/// per client (docs/security.md, "What each request costs").
///
/// The buckets live in this gateway's memory: with N gateways a client that
/// spreads its requests over all of them gets at most N times the rate. Reads
/// answered from memory (polls, region queries) are not limited.
package final class RateLimiter: Sendable {
    /// Why a request was refused: come back after this long.
    package struct Refusal: Error, Equatable {
        package var retryAfterSeconds: Int
    }

    package enum Scope: Hashable, Sendable {
        case postBySession(String)
        case postByAddress(String)
        case createBySession(String)
        case createByAddress(String)
        case roomsBySession(String)
        case startByAddress(String)
        case changesBySession(String)
        case changesByAddress(String)
        case historyByAddress(String)
        case wideRegionByAddress(String)
        case participantsByAddress(String)
        case sessionLookupByAddress(String)
    }

    /// Reads that cost far more than a poll, each with its bucket per address.
    package enum CostlyRead: Sendable {
        /// `messages` that must read PostgreSQL (a page older than the gateway holds).
        case history
        /// `chats` whose box and zoom range make the index look at more than
        /// `Limits.wideRegionCells` cells (the whole world at every zoom).
        case wideRegion
        /// `participants`: a command to the rooms service and its reads, made-up rooms too.
        case participants
        /// A session id this gateway has never met: a `LookupSession` to the
        /// session service. Given back when the id turns out to be a live
        /// session (`refund`), so only guesses use the bucket up.
        case sessionLookup
    }

    private let settings: Mutex<RateLimitSettings>
    private let buckets = Mutex<[Scope: TokenBucket]>([:])
    private let now: @Sendable () -> UInt64

    package init(settings: RateLimitSettings, now: @escaping @Sendable () -> UInt64 = { MonotonicClock.ns() }) {
        self.settings = Mutex(settings)
        self.now = now
    }

    /// New numbers (e.g. from live settings); buckets keep their tokens.
    package func update(_ new: RateLimitSettings) { settings.withLock { $0 = new } }

    /// The limited things a client does, whichever protocol it speaks.
    package enum Action: Sendable, Equatable {
        /// A post: by a session, or to the lobby (no session).
        case say(session: SessionID?)
        case create(session: SessionID)
        case start
        /// A join, leave or rename.
        case change(session: SessionID)
    }

    package func admit(_ action: Action, address: @autoclosure () -> String) -> Refusal? {
        let s = settings.withLock { $0 }
        let scopes: [(Scope, TokenBucket.Rule)]
        switch action {
        case .say(let session?):
            scopes = [(.postBySession(session.value), s.postPerSession), (.postByAddress(address()), s.postPerAddress)]
        case .say(nil):
            scopes = [(.postByAddress(address()), s.postPerAddress)]
        case .create(let session):
            scopes = [
                (.createBySession(session.value), s.createPerSession),
                (.createByAddress(address()), s.createPerAddress),
                (.roomsBySession(session.value), s.roomsPerSession),
            ]
        case .start:
            scopes = [(.startByAddress(address()), s.startPerAddress)]
        case .change(let session):
            // Per address too: an address that keeps starting sessions would multiply the per-session rate.
            scopes = [
                (.changesBySession(session.value), s.changesPerSession),
                (.changesByAddress(address()), s.changesPerAddress),
            ]
        }
        return take(scopes.filter { !$0.1.isOff })
    }

    /// A costly read: admitted, or when to come back.
    package func admitCostlyRead(_ read: CostlyRead, address: String) -> Refusal? {
        let (scope, rule) = bucket(of: read, address: address)
        return rule.isOff ? nil : take([(scope, rule)])
    }

    /// Gives back the token of a costly read that turned out cheap (a session
    /// lookup that found a live session).
    package func refund(_ read: CostlyRead, address: String) {
        let (scope, rule) = bucket(of: read, address: address)
        guard !rule.isOff else { return }
        let t = now()
        buckets.withLock { table in
            guard var bucket = table[scope] else { return }
            bucket.refund(rule, nowNs: t)
            table[scope] = bucket
        }
    }

    private func bucket(of read: CostlyRead, address: String) -> (Scope, TokenBucket.Rule) {
        let s = settings.withLock { $0 }
        return switch read {
        case .history: (.historyByAddress(address), s.historyPerAddress)
        case .wideRegion: (.wideRegionByAddress(address), s.wideRegionPerAddress)
        case .participants: (.participantsByAddress(address), s.participantsPerAddress)
        case .sessionLookup: (.sessionLookupByAddress(address), s.sessionLookupPerAddress)
        }
    }

    /// Takes one token from every bucket, or none when any of them is short.
    private func take(_ scopes: [(Scope, TokenBucket.Rule)]) -> Refusal? {
        guard !scopes.isEmpty else { return nil }
        let t = now()
        let waitNs = buckets.withLock { table -> UInt64 in
            var longest: UInt64 = 0
            for (scope, rule) in scopes {
                var bucket = table[scope] ?? TokenBucket(rule: rule, nowNs: t)
                bucket.refill(rule, nowNs: t)
                table[scope] = bucket
                longest = max(longest, bucket.wait(rule, nowNs: t))
            }
            guard longest == 0 else { return longest }
            for (scope, _) in scopes { table[scope]!.take(nowNs: t) }
            return 0
        }
        guard waitNs > 0 else { return nil }
        return Refusal(retryAfterSeconds: max(1, Int((Double(waitNs) / 1e9).rounded(.up))))
    }

    /// Forgets buckets that are full again, so memory follows active clients only.
    package func prune() {
        let s = settings.withLock { $0 }
        let t = now()
        buckets.withLock { table in
            table = table.filter { scope, bucket in !bucket.isIdle(s.rule(for: scope), nowNs: t) }
        }
    }

    package var bucketCount: Int { buckets.withLock { $0.count } }
}

/// A monotonic clock in nanoseconds since the process began (not wall time:
/// buckets must not jump when the system clock is set).
package enum MonotonicClock {
    package static let origin = ContinuousClock.now

    package static func ns() -> UInt64 {
        let (seconds, attoseconds) = (ContinuousClock.now - origin).components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000
    }
}
