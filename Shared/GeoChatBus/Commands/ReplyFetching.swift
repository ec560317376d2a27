/// Whether a requester's reply readers fetch: they rest while no request has
/// waited for `quiet`, and wake before the next request is sent.
///
/// A reply can only follow a request, so a reader with no request outstanding
/// expects nothing; on a broker that answers a fetch only when its wait ends
/// (Tansu) it would still cost a fetch every wait, on every instance that asks
/// anything (gateways, messaging, expiry). Waking is a new assignment at the
/// reader's own positions, which starts a fetch at once, before the request
/// is even produced: the first request after a quiet minute is as fast as any.
/// A pure state machine: `KafkaCommandBus` carries out its actions under the
/// lock that holds it, so a rest and a wake never cross.
struct ReplyFetching: Sendable {
    enum Action: Equatable, Sendable {
        case none
        case rest
        case wake
    }

    /// How long without a request waiting before the readers rest.
    let quiet: Duration
    private(set) var resting = false
    private var lastBusy: ContinuousClock.Instant

    init(quiet: Duration, now: ContinuousClock.Instant) {
        self.quiet = quiet
        self.lastBusy = now
    }

    /// A request is about to be sent: wake the readers if they rest.
    mutating func requestStarting(at now: ContinuousClock.Instant) -> Action {
        lastBusy = now
        guard resting else { return .none }
        resting = false
        return .wake
    }

    /// A request ended (answered, failed or timed out): the quiet counts from here.
    mutating func requestEnded(at now: ContinuousClock.Instant) {
        lastBusy = max(lastBusy, now)
    }

    /// A periodic look: rest once the reply path is ready, nothing waits, and
    /// nothing has for `quiet`.
    mutating func tick(at now: ContinuousClock.Instant, waiting: Int, ready: Bool) -> Action {
        guard !resting, ready, waiting == 0, now - lastBusy >= quiet else { return .none }
        resting = true
        return .rest
    }
}
