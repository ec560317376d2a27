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
