import Synchronization

/// The settings as this instance knows them now: fed from `geochat.settings`,
/// read on every use, so a change an admin makes reaches the instance within
/// the time the record takes to arrive. A setting nobody stored falls back to
/// the instance's own configuration (the caller's `default`).
public final class LiveSettings: Sendable {
    private let values = Mutex<[String: SettingValue]>([:])

    public init() {}

    /// Takes a record unless a newer version is already held.
    public func apply(_ setting: SettingValue) {
        values.withLock { values in
            if let held = values[setting.name], held.version >= setting.version { return }
            values[setting.name] = setting
        }
    }

    public func int(_ name: SettingName, default fallback: Int) -> Int {
        values.withLock { $0[name.rawValue]?.value } ?? fallback
    }

    public func stored(_ name: SettingName) -> SettingValue? {
        values.withLock { $0[name.rawValue] }
    }

    public var all: [SettingValue] {
        values.withLock { Array($0.values) }.sorted { $0.name < $1.name }
    }
}
