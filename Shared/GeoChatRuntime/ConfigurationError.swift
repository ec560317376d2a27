import Foundation

public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public let key: String, value: String, expected: String

    public init(key: String, value: String, expected: String) {
        self.key = key
        self.value = value
        self.expected = expected
    }

    public var description: String { "configuration \(key)=\(value): expected \(expected)" }
}
