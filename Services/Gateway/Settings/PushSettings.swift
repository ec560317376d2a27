import GatewayCore
import GeoChatDomain
import GeoChatRuntime

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
