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
