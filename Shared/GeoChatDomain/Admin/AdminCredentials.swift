import Crypto
import Foundation

/// An admin's login name: the nickname rule (an ASCII letter, then letters,
/// digits or `_`, 1 to 32 characters), so it is safe in logs and audit rows.
public struct AdminName: Hashable, Sendable, CustomStringConvertible {
    public let value: String

    public init?(_ raw: String) {
        guard Nickname(raw) != nil else { return nil }
        value = raw
    }

    public var description: String { value }
}

/// Password rules: long enough to resist guessing, and within bcrypt's 72-byte input.
public enum AdminPassword {
    public static let length = 12...72

    public static func check(_ password: String) throws(ProtocolError) {
        guard length.contains(password.utf8.count) else {
            throw ProtocolError(.badParam, "the password must be \(length.lowerBound) to \(length.upperBound) bytes")
        }
    }
}
