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
