import GatewayCore
import GeoChatRuntime

// The abuse limits as the configuration sets them (`rate.*`, docs/operations.md).
extension RateLimitSettings {
    init(_ configuration: Configuration) throws {
        let d = Self.defaults
        var s = d
        func rule(_ key: String, _ fallback: TokenBucket.Rule) throws -> TokenBucket.Rule {
            var rule = fallback
            rule.perSecond = try configuration.double("rate.\(key).per.s", default: fallback.perSecond)
            rule.capacity = try configuration.double("rate.\(key).burst", default: fallback.capacity)
            return rule
        }
        s.postPerSession = try rule("post", d.postPerSession)
        s.postPerSession.minIntervalNs =
            UInt64(
                max(
                    0,
                    try configuration.int(
                        "rate.post.min.interval.ms", default: Int(d.postPerSession.minIntervalNs / 1_000_000))))
            * 1_000_000
        s.postPerAddress = try rule("post.address", d.postPerAddress)
        s.createPerSession = try rule("create", d.createPerSession)
        s.createPerAddress = try rule("create.address", d.createPerAddress)
        s.startPerAddress = try rule("start.address", d.startPerAddress)
        s.changesPerSession = try rule("change", d.changesPerSession)
        s.changesPerAddress = try rule("change.address", d.changesPerAddress)
        s.historyPerAddress = try rule("history.address", d.historyPerAddress)
        s.wideRegionPerAddress = try rule("wide.region.address", d.wideRegionPerAddress)
        s.participantsPerAddress = try rule("participants.address", d.participantsPerAddress)
        s.sessionLookupPerAddress = try rule("session.lookup.address", d.sessionLookupPerAddress)
        s.roomsPerSessionPerHour = try configuration.int("rate.rooms.per.hour", default: d.roomsPerSessionPerHour)
        self = s
    }
}
