import GeoChatDomain
import GeoChatRuntime

/// The expiry service's settings (docs/operations.md, "Expiry").
struct ExpirySettings: Sendable {
    /// Admin-set values from `geochat.settings`; they win over the start-up configuration.
    let live: LiveSettings
    private let configuredIntervalS: Int
    private let configuredIdleLimitS: Int

    /// How often the schedule starts a run (`expiry.interval.s`, default hourly).
    /// Read on every use: a change an admin makes applies to the next check.
    var interval: Duration { .seconds(live.int(.expiryInterval, default: configuredIntervalS)) }
    /// Rooms not visited for this long go (`room.idle.limit.s`, default 30 days).
    var idleLimit: Duration { .seconds(live.int(.roomIdleLimit, default: configuredIdleLimitS)) }
    /// Rooms per removal batch, one transaction at each owner (`expiry.batch.size`).
    var batchSize: Int
    /// Measured (docs/benchmarks.md, "Expiry"): 1,000,000 rooms took 34.0 s in
    /// batches of 2,000 (four broker hops and the job's bookkeeping per batch),
    /// 25.0 s in batches of 5,000 and 30.8 s in batches of 10,000, whose
    /// statements took over three times as long as at 5,000.
    static let defaultBatchSize = 5000
    /// Ids per selection page (`expiry.page.size`).
    var pageSize: Int
    /// Batches in flight at once, so the rooms and messaging services work side by side (`expiry.parallel`).
    var parallel: Int
    /// How long one batch may take at an owner before it is asked again (`expiry.request.timeout.s`).
    var requestTimeout: Duration
    /// How many rooms a dry run lists in its report.
    var dryRunListLimit = 1000

    /// An on-demand run's idle limit must lie in this range (seconds): the
    /// `room.idle.limit.s` setting's range, one rule for the admin API and here.
    static let idleLimitRange = SettingsCatalog.definition(.roomIdleLimit).range

    init(_ configuration: Configuration, live: LiveSettings = LiveSettings()) throws {
        self.live = live
        configuredIntervalS = try configuration.int("expiry.interval.s", default: 3600)
        configuredIdleLimitS = try configuration.int("room.idle.limit.s", default: 30 * 86_400)
        batchSize = min(
            max(try configuration.int("expiry.batch.size", default: Self.defaultBatchSize), 1), Limits.maxRoomBatch)
        pageSize = min(max(try configuration.int("expiry.page.size", default: 10_000), 1), Limits.maxRoomBatch)
        parallel = min(max(try configuration.int("expiry.parallel", default: 2), 1), 16)
        requestTimeout = try configuration.seconds("expiry.request.timeout.s", default: 30)
    }
}
