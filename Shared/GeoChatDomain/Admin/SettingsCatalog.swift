public enum SettingsCatalog {
    public static let all: [SettingDefinition] = [
        .init(
            name: .presenceTimeout, defaultValue: 60, range: 1...86_400,
            meaning: "a participant is listed while seen within this many seconds (gateway)"),
        .init(
            name: .sessionLifetime, defaultValue: 86_400, range: 60...31_536_000,
            meaning: "a session idle this many seconds is ended (session)"),
        .init(
            name: .roomIdleLimit, defaultValue: 2_592_000, range: 60...315_360_000,
            meaning: "a room not visited for this many seconds is expired (expiry)"),
        .init(
            name: .expiryInterval, defaultValue: 3600, range: 1...604_800,
            meaning: "seconds between scheduled expiry runs (expiry)"),
        .init(
            name: .roomCap, defaultValue: Limits.defaultRoomCap, range: 1...5000,
            meaning: "most rooms in one chats answer (gateway)"),
        .init(
            name: .ratePostsPerMinute, defaultValue: 12, range: 0...100_000,
            meaning: "posts per minute of one session, 0 = no limit (gateway)"),
        .init(
            name: .ratePostBurst, defaultValue: 10, range: 0...100_000,
            meaning: "posts one session may make at once above its rate, 0 = no limit (gateway)"),
        .init(
            name: .rateRoomsPerHour, defaultValue: 20, range: 0...100_000,
            meaning: "new rooms one session may create per hour, 0 = no limit (gateway)"),
        .init(
            name: .adminLoginFailures, defaultValue: 5, range: 1...1000,
            meaning: "failed logins of one admin name in 5 minutes before logins are refused (session)"),
    ]

    public static func definition(_ name: String) -> SettingDefinition? {
        all.first { $0.name.rawValue == name }
    }

    /// The definition of one of the names above (each is in `all`: `AdminRulesTests`).
    public static func definition(_ name: SettingName) -> SettingDefinition {
        guard let found = all.first(where: { $0.name == name }) else {
            preconditionFailure("\(name) is a SettingName without a definition in SettingsCatalog.all")
        }
        return found
    }

    /// Checks a change as a whole: every name known, every value in range.
    /// Nothing is applied unless all of it is valid.
    public static func validate(_ changes: [String: Int]) throws(ProtocolError) -> [SettingName: Int] {
        guard !changes.isEmpty else { throw ProtocolError(.missingParam, "no settings given") }
        var checked: [SettingName: Int] = [:]
        for name in changes.keys.sorted() {
            let value = changes[name]!
            guard let definition = definition(name) else {
                throw ProtocolError(.badParam, "unknown setting '\(name.prefix(64))'")
            }
            guard definition.range.contains(value) else {
                throw ProtocolError(
                    .badParam,
                    "setting '\(name)' must be between \(definition.range.lowerBound) and \(definition.range.upperBound)"
                )
            }
            checked[definition.name] = value
        }
        return checked
    }
}

public struct SettingDefinition: Sendable {
    public let name: SettingName
    public let defaultValue: Int
    public let range: ClosedRange<Int>
    public let meaning: String
}

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

/// A stored setting as it travels on `geochat.settings` (key: the name).
/// `version` comes from one database sequence: readers keep the highest, so
/// a late or repeated record never undoes a newer change.
public struct SettingValue: Codable, Sendable, Equatable {
    public var name: String
    public var value: Int
    public var version: Int64
    public var updatedBy: String
    public var updatedAtMs: Int64

    public init(name: String, value: Int, version: Int64, updatedBy: String, updatedAtMs: Int64) {
        self.name = name
        self.value = value
        self.version = version
        self.updatedBy = updatedBy
        self.updatedAtMs = updatedAtMs
    }
}
