/// A token bucket: holds up to `capacity` tokens, refills at `perSecond`, and
/// each admitted action takes one. A burst of `capacity` passes at once; after
/// that the sustained rate is `perSecond`. Optionally two admitted actions are
/// at least `minInterval` apart (ejabberd's `min_message_interval`).
package struct TokenBucket: Sendable {
    package struct Rule: Sendable, Equatable {
        package var perSecond: Double
        package var capacity: Double
        package var minIntervalNs: UInt64 = 0

        /// A rule with a non-positive rate or burst limits nothing.
        package var isOff: Bool { perSecond <= 0 || capacity <= 0 }
    }

    package private(set) var tokens: Double
    package private(set) var lastRefillNs: UInt64
    private var lastTakenNs: UInt64?

    package init(rule: Rule, nowNs: UInt64) {
        tokens = rule.capacity
        lastRefillNs = nowNs
    }

    package mutating func refill(_ rule: Rule, nowNs: UInt64) {
        guard nowNs > lastRefillNs else { return }
        tokens = min(rule.capacity, tokens + Double(nowNs - lastRefillNs) / 1e9 * rule.perSecond)
        lastRefillNs = nowNs
    }

    /// Nanoseconds until one token may be taken; 0 when one may be taken now
    /// or the rule is off (a rate of 0 would make the wait infinite).
    package func wait(_ rule: Rule, nowNs: UInt64) -> UInt64 {
        guard !rule.isOff else { return 0 }
        var wait: UInt64 = 0
        if tokens < 1 { wait = UInt64(((1 - tokens) / rule.perSecond * 1e9).rounded(.up)) }
        if let lastTakenNs, rule.minIntervalNs > 0, nowNs < lastTakenNs + rule.minIntervalNs {
            wait = max(wait, lastTakenNs + rule.minIntervalNs - nowNs)
        }
        return wait
    }

    package mutating func take(nowNs: UInt64) {
        tokens -= 1
        lastTakenNs = nowNs
    }

    /// One token back, up to the capacity (an action that turned out not to cost).
    package mutating func refund(_ rule: Rule, nowNs: UInt64) {
        refill(rule, nowNs: nowNs)
        tokens = min(rule.capacity, tokens + 1)
    }

    /// Full and not taken from within `minInterval`: forgetting it changes nothing.
    /// A bucket whose rule was turned off since (live settings) is idle too.
    package func isIdle(_ rule: Rule, nowNs: UInt64) -> Bool {
        guard !rule.isOff else { return true }
        var copy = self
        copy.refill(rule, nowNs: nowNs)
        return copy.tokens >= rule.capacity && copy.wait(rule, nowNs: nowNs) == 0
    }
}
