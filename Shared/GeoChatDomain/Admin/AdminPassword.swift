import Crypto
import Foundation

/// Password rules: long enough to resist guessing, and within bcrypt's 72-byte input.
public enum AdminPassword {
    public static let length = 12...72

    public static func check(_ password: String) throws(ProtocolError) {
        guard length.contains(password.utf8.count) else {
            throw ProtocolError(.badParam, "the password must be \(length.lowerBound) to \(length.upperBound) bytes")
        }
    }
}
