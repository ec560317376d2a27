import GeoChatDomain

/// The numbers of the gateway's abuse limits. The start-up configuration gives
/// them; the live settings an admin stores (`rate.post.per.min`,
/// `rate.post.burst`, `rate.rooms.per.hour`) win over it (`overridden(by:)`).
///
/// Every key is a flag or an environment variable (`rate.post.per.s` is
/// `GEOCHAT_RATE_POST_PER_S`). A rate or burst of 0 turns that limit off.
/// Defaults follow Synapse's `rc_message` (0.2 messages/s, burst 10) for one
/// session's posts, with ejabberd's `min_message_interval` idea on top; the
/// per-address limits are looser because many phones share a carrier's NAT.
package struct RateLimitSettings: Sendable, Equatable {
    package var postPerSession: TokenBucket.Rule
    package var postPerAddress: TokenBucket.Rule
    package var createPerSession: TokenBucket.Rule
    package var createPerAddress: TokenBucket.Rule
    package var startPerAddress: TokenBucket.Rule
    /// `join`, `leave` and `nick` of one session: each writes to PostgreSQL and
    /// publishes an event every gateway reads.
    package var changesPerSession: TokenBucket.Rule
    /// The same, per client address: sessions are cheap to start, so the
    /// per-session rate alone multiplies with them.
    package var changesPerAddress: TokenBucket.Rule
    /// `messages` that must read PostgreSQL (a room not yet in this gateway's
    /// memory, or a page older than it holds), per client address.
    package var historyPerAddress: TokenBucket.Rule
    /// `chats` that look at more than `Limits.wideRegionCells` cells of the
    /// gateway's index, per client address.
    package var wideRegionPerAddress: TokenBucket.Rule
    /// `participants` reads (a command and a PostgreSQL read each), per client address.
    package var participantsPerAddress: TokenBucket.Rule
    /// Lookups of session ids this gateway has never met, per client address;
    /// a lookup that finds a live session gives its token back, so only
    /// guessed or stale ids use the bucket up (a carrier's NAT of many real
    /// phones meeting a restarted gateway is not held back).
    package var sessionLookupPerAddress: TokenBucket.Rule
    /// New rooms one session may create per hour (a bucket of this size refilled over an hour).
    package var roomsPerSessionPerHour: Int

    package static let defaults = RateLimitSettings(
        postPerSession: .init(perSecond: 0.2, capacity: 10, minIntervalNs: 200_000_000),
        postPerAddress: .init(perSecond: 5, capacity: 50),
        createPerSession: .init(perSecond: 0.1, capacity: 3),
        createPerAddress: .init(perSecond: 1, capacity: 20),
        startPerAddress: .init(perSecond: 1, capacity: 30),
        changesPerSession: .init(perSecond: 1, capacity: 20),
        changesPerAddress: .init(perSecond: 5, capacity: 50),
        historyPerAddress: .init(perSecond: 5, capacity: 50),
        wideRegionPerAddress: .init(perSecond: 1, capacity: 10),
        participantsPerAddress: .init(perSecond: 5, capacity: 50),
        sessionLookupPerAddress: .init(perSecond: 2, capacity: 20),
        roomsPerSessionPerHour: 20)

    package init(
        postPerSession: TokenBucket.Rule, postPerAddress: TokenBucket.Rule, createPerSession: TokenBucket.Rule,
        createPerAddress: TokenBucket.Rule, startPerAddress: TokenBucket.Rule,
        changesPerSession: TokenBucket.Rule = defaults.changesPerSession,
        changesPerAddress: TokenBucket.Rule = defaults.changesPerAddress,
        historyPerAddress: TokenBucket.Rule = defaults.historyPerAddress,
        wideRegionPerAddress: TokenBucket.Rule = defaults.wideRegionPerAddress,
        participantsPerAddress: TokenBucket.Rule = defaults.participantsPerAddress,
        sessionLookupPerAddress: TokenBucket.Rule = defaults.sessionLookupPerAddress, roomsPerSessionPerHour: Int
    ) {
        self.postPerSession = postPerSession
        self.postPerAddress = postPerAddress
        self.createPerSession = createPerSession
        self.createPerAddress = createPerAddress
        self.startPerAddress = startPerAddress
        self.changesPerSession = changesPerSession
        self.changesPerAddress = changesPerAddress
        self.historyPerAddress = historyPerAddress
        self.wideRegionPerAddress = wideRegionPerAddress
        self.participantsPerAddress = participantsPerAddress
        self.sessionLookupPerAddress = sessionLookupPerAddress
        self.roomsPerSessionPerHour = roomsPerSessionPerHour
    }

    /// These numbers with the live settings an admin stored put in their place.
    /// A stored 0 turns that limit off, as in the configuration.
    package func overridden(by live: LiveSettings) -> RateLimitSettings {
        var s = self
        if let perMinute = live.stored(.ratePostsPerMinute)?.value {
            s.postPerSession.perSecond = Double(perMinute) / 60
        }
        if let burst = live.stored(.ratePostBurst)?.value { s.postPerSession.capacity = Double(burst) }
        if let rooms = live.stored(.rateRoomsPerHour)?.value { s.roomsPerSessionPerHour = rooms }
        return s
    }

    /// The hourly room cap as a bucket: `roomsPerSessionPerHour` at once, refilled over an hour.
    package var roomsPerSession: TokenBucket.Rule {
        .init(perSecond: Double(roomsPerSessionPerHour) / 3600, capacity: Double(roomsPerSessionPerHour))
    }
}

// Which number limits each bucket of `RateLimiter`.
extension RateLimitSettings {
    package func rule(for scope: RateLimiter.Scope) -> TokenBucket.Rule {
        switch scope {
        case .postBySession: postPerSession
        case .postByAddress: postPerAddress
        case .createBySession: createPerSession
        case .createByAddress: createPerAddress
        case .roomsBySession: roomsPerSession
        case .startByAddress: startPerAddress
        case .changesBySession: changesPerSession
        case .changesByAddress: changesPerAddress
        case .historyByAddress: historyPerAddress
        case .wideRegionByAddress: wideRegionPerAddress
        case .participantsByAddress: participantsPerAddress
        case .sessionLookupByAddress: sessionLookupPerAddress
        }
    }
}
