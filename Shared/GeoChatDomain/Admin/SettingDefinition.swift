public struct SettingDefinition: Sendable {
    public let name: SettingName
    public let defaultValue: Int
    public let range: ClosedRange<Int>
    public let meaning: String
}
