import GeoChatDomain

/// One request's client, as a surface hands it to `ChatActions`: the address
/// its per-address limits count it by, and the gateway's limits that apply to
/// it — the writes (`RateLimiter.Action`), the reads that cost far more than a
/// poll (`RateLimiter.CostlyRead`), and its share of the places for waiting
/// clients (`WaitingPlaces`). Every surface makes one per request; the core
/// asks it, so a limit is checked in one place whichever protocol the client
/// speaks. The address is worked out only when a limit needs it (a poll
/// answered from memory never does).
package struct ChatClient: Sendable {
    private let limiter: RateLimiter?
    private let addressOf: @Sendable () -> String
    /// The session whose sign of life this request already showed
    /// (`ChatActions.signOfLife`): the action's own lookup does not note it again.
    package var notedSignOfLife: SessionID?

    /// `address`: how the surface reads the client's address from its request
    /// (trusted proxies, `HTTP/ClientAddresses`); called at most when needed.
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
    package static let unlimited = ChatClient()

    /// The key the per-address limits count this client by.
    package var address: String { addressOf() }

    /// Takes the tokens of a limited write, or throws `rate_limited` with when to come back.
    package func admit(_ action: RateLimiter.Action) throws(ProtocolError) {
        guard let limiter, let refusal = limiter.admit(action, address: address) else { return }
        throw ProtocolError(
            .rateLimited, "too many requests; try again in \(refusal.retryAfterSeconds) s",
            retryAfterSeconds: refusal.retryAfterSeconds)
    }

    /// Takes a token for the read, or throws `rate_limited` with when to come back.
    package func admit(_ read: RateLimiter.CostlyRead) throws(ProtocolError) {
        guard let limiter, let refusal = limiter.admitCostlyRead(read, address: address) else { return }
        throw ProtocolError(
            .rateLimited, "too many costly reads (\(read)); try again in \(refusal.retryAfterSeconds) s",
            retryAfterSeconds: refusal.retryAfterSeconds)
    }

    /// The read turned out cheap: its token goes back.
    package func refund(_ read: RateLimiter.CostlyRead) { limiter?.refund(read, address: address) }
}
