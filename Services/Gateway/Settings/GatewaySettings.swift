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
        push = try PushSettings(configuration)
        webDirectory = configuration.string("web.dir", default: "")
        leafletDirectory = configuration.string("leaflet.dir", default: "/usr/share/javascript/leaflet")
        map = try MapSettings(configuration)
    }
}

/// Limits on what waiting clients hold: push subscribers and long polls.
struct PushSettings: Sendable {
    /// Push connections and waiting long polls per gateway, together. A push
    /// subscriber over it is refused (`503`); a long poll over it is answered
    /// at once. By default what the gateway's memory allows (`placesFor`).
    var maxSubscribers: Int
    /// The same, for one client address (0: no cap of its own).
    var maxPerAddress: Int
    /// A comment line every this often keeps proxies from closing an idle
    /// stream and finds clients that vanished (0: none).
    var keepAlive: Duration
    /// A write to a subscriber that takes longer than this (its connection
    /// is stalled) ends the stream; the client resumes by its last id.
    var writeTimeout: Duration
    /// A stream ends after this long, whatever it does (the client resumes by
    /// its last id, as browsers do by themselves): a subscriber that never
    /// reads only gets keep-alives, which never fill its buffers, so the write
    /// timeout alone would never free its place.
    var maxStreamDuration: Duration
    /// Messages one push write carries at most (what one subscriber holds at once).
    var batch: Int
    /// The kernel's send buffer of a push connection, in bytes (0: the
    /// kernel's own sizing, which grows to `net.ipv4.tcp_wmem`'s maximum, 4 MB
    /// by default, for a subscriber that stopped reading).
    var sendBufferBytes: Int

    /// What one waiting client may hold at worst: its task and connection
    /// (~19 KB measured, docs/capacity.md) and a stalled write in NIO's
    /// buffer, 128 KiB in all, plus the kernel's send buffer (64 KiB by
    /// default), which a container's memory limit is charged for
    /// (docs/operations.md, "Gateway memory and push places").
    static let bytesPerPlace = 192 * 1024
    /// Waiting clients take at most this share of the gateway's memory; the
    /// room index, sessions and timelines need the rest.
    static let shareOfMemory = 0.5
    static let mostPlaces = 100_000

    /// The places `memoryBytes` of memory allow: min(100,000, memory × ½ ÷ 192 KiB);
    /// 1 GiB gives 2,730. An explicit `push.max.subscribers` wins (the
    /// Kubernetes manifests size it from their rooms and sessions).
    static func placesFor(memoryBytes: UInt64) -> Int {
        let places = Double(memoryBytes) * shareOfMemory / Double(bytesPerPlace)
        return max(1, min(mostPlaces, Int(places)))
    }

    init(_ configuration: Configuration, memoryBytes: UInt64 = ProcessMemory.limitBytes()) throws {
        maxSubscribers = max(
            try configuration.int("push.max.subscribers", default: Self.placesFor(memoryBytes: memoryBytes)), 0)
        maxPerAddress = max(try configuration.int("push.max.per.address", default: 50), 0)
        keepAlive = .seconds(max(try configuration.int("push.keepalive.s", default: 30), 0))
        writeTimeout = .seconds(max(try configuration.int("push.write.timeout.s", default: 10), 1))
        maxStreamDuration = .seconds(max(try configuration.int("push.max.stream.s", default: 600), 1))
        batch = min(max(try configuration.int("push.batch", default: 50), 1), Limits.maxMessageLimit)
        sendBufferBytes = min(max(try configuration.int("push.send.buffer.bytes", default: 65_536), 0), Int(Int32.max))
    }
}
