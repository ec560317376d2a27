import GeoChatDomain

/// The limits of one request's client, as the routes hand them to `ChatActions`:
/// its address's buckets for the reads that cost far more than a poll
/// (`RateLimiter.CostlyRead`), and its share of the places for waiting clients
/// (`WaitingPlaces`). The address is worked out only when a limit needs it (a
/// poll answered from memory never does).
package struct ClientLimits: Sendable {
    private let limiter: RateLimiter?
    private let addressOf: @Sendable () -> String

    package init(limiter: RateLimiter, address: @escaping @Sendable () -> String) {
        self.limiter = limiter
        self.addressOf = address
    }

    private init() {
        limiter = nil
        addressOf = { "" }
    }

    /// No limits: the gateway's own reads on behalf of many clients (a push
    /// room's participant list, read once per change for all its subscribers).
    package static let unlimited = ClientLimits()

    /// The key the per-address limits count this client by.
    package var address: String { addressOf() }

    /// Takes a token for the read, or throws `rate_limited`.
    package func admit(_ read: RateLimiter.CostlyRead) throws(ProtocolError) {
        guard let limiter, let refusal = limiter.admitCostlyRead(read, address: address) else { return }
        throw ProtocolError(.rateLimited, "too many costly reads (\(read)); try again in \(refusal.retryAfterSeconds) s")
    }

    /// `admit`, spelled as the call sites read best: `try admitCostlyRead(.history)`.
    package func callAsFunction(_ read: RateLimiter.CostlyRead) throws(ProtocolError) { try admit(read) }

    /// The read turned out cheap: its token goes back.
    package func refund(_ read: RateLimiter.CostlyRead) { limiter?.refund(read, address: address) }
}
