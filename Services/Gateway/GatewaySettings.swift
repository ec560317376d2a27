import GeoChatDomain
import GeoChatRuntime

/// The gateway's own settings (besides the common ones in `ServiceEnvironment`).
struct GatewaySettings: Sendable {
    /// How long a request waits for the owning service before answering 503.
    var requestTimeout: Duration
    /// Put in front of `/chat.php`, `/add.php`, `/messages.php`, e.g. `/~rost/geochat`.
    var pathPrefix: String
    /// A participant is listed while it showed a sign of life within this time.
    var presenceTimeoutMs: Int64
    /// Most rooms one `chats` answer holds.
    var roomCap: Int

    init(_ configuration: Configuration) throws {
        requestTimeout = .milliseconds(try configuration.int("request.timeout.ms", default: 3000))
        var prefix = configuration.string("path.prefix", default: "")
        while prefix.hasSuffix("/") { prefix.removeLast() }
        if !prefix.isEmpty && !prefix.hasPrefix("/") { prefix = "/" + prefix }
        pathPrefix = prefix
        presenceTimeoutMs = Int64(try configuration.int("presence.timeout.s", default: 60)) * 1000
        roomCap = try configuration.int("room.cap", default: Limits.defaultRoomCap)
    }
}
