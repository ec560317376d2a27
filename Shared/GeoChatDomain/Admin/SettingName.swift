/// The settings an operator may change while the cluster runs. Each has a
/// name (the key on `geochat.settings`), the range an admin may set, and the
/// default an instance uses when none is stored and its configuration gives none.
/// Values are integers: seconds for `.s` names, counts otherwise, 0 turns a rate limit off.
public struct SettingName: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Gateway: a participant is listed while seen within this many seconds.
    public static let presenceTimeout = SettingName(rawValue: "presence.timeout.s")
    /// Session service: a session idle this long is ended.
    public static let sessionLifetime = SettingName(rawValue: "session.lifetime.s")
    /// Expiry service: a room not visited for this long is removed.
    public static let roomIdleLimit = SettingName(rawValue: "room.idle.limit.s")
    /// Expiry service: time between scheduled runs.
    public static let expiryInterval = SettingName(rawValue: "expiry.interval.s")
    /// Gateway: most rooms in one `chats` answer.
    public static let roomCap = SettingName(rawValue: "room.cap")
    /// Gateway abuse limits (Services/Gateway/Limits): posts per minute of one
    /// session, the burst of posts above that rate, and new rooms per hour of
    /// one session. 0 turns that limit off.
    public static let ratePostsPerMinute = SettingName(rawValue: "rate.post.per.min")
    public static let ratePostBurst = SettingName(rawValue: "rate.post.burst")
    public static let rateRoomsPerHour = SettingName(rawValue: "rate.rooms.per.hour")
    /// Session service: failed logins of one admin name within 5 minutes before
    /// further attempts are refused (429) until the window moves on.
    public static let adminLoginFailures = SettingName(rawValue: "rate.admin.login.failures")
}
