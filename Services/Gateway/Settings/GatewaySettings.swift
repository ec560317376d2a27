import GatewayCore
import GeoChatDomain
import GeoChatRuntime

/// The gateway's own settings (besides the common ones in `ServiceEnvironment`).
struct GatewaySettings: Sendable {
    /// How long a request waits for the owning service before answering 503.
    var requestTimeout: Duration
    /// Put in front of `/chat.php`, `/add.php`, `/messages.php`, e.g. `/~rost/geochat`.
    var pathPrefix: String
    /// Settings an admin may change while the gateway runs (`geochat.settings`);
    /// the configured values below apply while none is stored.
    let live: LiveSettings
    var configuredPresenceTimeoutS: Int
    var configuredRoomCap: Int
    /// Abuse limits on posts, room creation and session starts, as configured.
    var rateLimits: RateLimitSettings
    /// The operators' listener: the admin API, `/status`, `/metrics`. Loopback
    /// by default: put it on an internal address only, never behind the public
    /// load balancer (docs/security.md).
    var adminHost: String
    var adminPort: Int
    /// Whether this gateway serves the admin API on its operators' listener
    /// (`admin.api`: `on`, the default, or `off`). Off: `/status`, `/metrics`
    /// and the probes only, and no login seal key is needed, so an
    /// internet-facing gateway holds no admin secret (deploy/kubernetes runs
    /// the admin API on a gateway of its own).
    var adminAPI: Bool
    /// Who a request is from, for the per-address limits (trusted proxies).
    var clientAddresses: ClientAddresses
    /// A connection with no request under way for this long is closed; a request
    /// head must arrive within it too (partial headers do not count as activity).
    var idleTimeout: Duration
    /// A POST body must have arrived within this time.
    var bodyTimeout: Duration
    /// Id ranges the room index loads side by side at start.
    var indexLoadRanges: Int
    /// Where the room index is kept between runs (`room.snapshot.file`); nil: nowhere, every start loads every room.
    var roomSnapshot: RoomSnapshotFile?
    /// How often the room snapshot is written while the gateway runs (and once at a graceful stop).
    var roomSnapshotInterval: Duration
    /// Push subscribers and long polls (docs/api.md, "Push").
    var push: PushSettings
    /// The web map's files (`web/` of the repository), served at `/` and `/map/`;
    /// empty: no web map.
    var webDirectory: String
    /// Debian's `libjs-leaflet`, served at `/map/leaflet/`.
    var leafletDirectory: String
    /// The operator's base map and place search for the web map.
    var map: MapSettings

    /// A participant is listed while it showed a sign of life within this time.
    var presenceTimeoutMs: Int64 { Int64(live.int(.presenceTimeout, default: configuredPresenceTimeoutS)) * 1000 }
    /// Most rooms one `chats` answer holds.
    var roomCap: Int { live.int(.roomCap, default: configuredRoomCap) }
    /// The abuse limits now: the configured ones with the admin's live `rate.*` values.
    var currentRateLimits: RateLimitSettings { rateLimits.overridden(by: live) }

    init(_ configuration: Configuration, live: LiveSettings = LiveSettings()) throws {
        self.live = live
        requestTimeout = .milliseconds(try configuration.int("request.timeout.ms", default: 3000))
        var prefix = configuration.string("path.prefix", default: "")
        while prefix.hasSuffix("/") { prefix.removeLast() }
        if !prefix.isEmpty && !prefix.hasPrefix("/") { prefix = "/" + prefix }
        pathPrefix = prefix
        configuredPresenceTimeoutS = try configuration.int("presence.timeout.s", default: 60)
        configuredRoomCap = try configuration.int("room.cap", default: Limits.defaultRoomCap)
        rateLimits = try RateLimitSettings(configuration)
        clientAddresses = try ClientAddresses(configuration)
        adminHost = configuration.string("admin.host", default: "127.0.0.1")
        adminPort = try configuration.int("admin.port", default: 9180)
        switch configuration.string("admin.api", default: "on").lowercased() {
        case "on": adminAPI = true
        case "off": adminAPI = false
        case let other: throw ConfigurationError(key: "admin.api", value: other, expected: "on or off")
        }
        idleTimeout = .seconds(try configuration.int("http.idle.timeout.s", default: 15))
        bodyTimeout = .seconds(try configuration.int("http.body.timeout.s", default: 10))
        indexLoadRanges = min(max(try configuration.int("index.load.ranges", default: 4), 1), 64)
        let snapshotPath = configuration.string("room.snapshot.file", default: "")
        roomSnapshot = snapshotPath.isEmpty ? nil : RoomSnapshotFile(path: snapshotPath)
        roomSnapshotInterval = .seconds(try configuration.int("room.snapshot.interval.s", default: 300))
        guard roomSnapshotInterval > .zero else {
            throw ConfigurationError(
                key: "room.snapshot.interval.s", value: "\(roomSnapshotInterval.components.seconds)",
                expected: "a positive number of seconds")
        }
        push = try PushSettings(configuration)
        webDirectory = configuration.string("web.dir", default: "")
        leafletDirectory = configuration.string("leaflet.dir", default: "/usr/share/javascript/leaflet")
        map = try MapSettings(configuration)
    }
}
