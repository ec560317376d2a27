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

/// Admin bearer tokens: 256 bits from the system's cryptographic random
/// source, hex-encoded. Only their SHA-256 is stored or sent between
/// services, so neither the table nor a Kafka record can be replayed as a token.
public enum BearerToken {
    public static let prefix = "gca_"

    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        for _ in 0..<4 {
            var word = generator.next() as UInt64
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return prefix + hex(bytes)
    }

    /// The shape `hash` answers: 64 lowercase hex digits.
    public static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Nil for anything that is not the shape `generate` makes.
    public static func hash(_ token: String) -> String? {
        let body = token.utf8.dropFirst(prefix.utf8.count)
        guard token.hasPrefix(prefix), body.count == 64,
            body.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        return hex(Array(SHA256.hash(data: Array(token.utf8))))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// How an admin's password crosses Kafka from the gateway to the session
/// service: sealed (ChaCha20-Poly1305) with a key only gateways and session
/// services hold (`GEOCHAT_LOGIN_SEAL_KEY`), and bound to the login's name and
/// the hash of the token the gateway minted for it. A reader of the topic
/// learns nothing; a copied login can only grant the token its gateway made
/// (whose value never travels), and a sealed password cannot be moved into a
/// login for another token (docs/security.md, "Secrets and the bus").
public struct LoginSeal: Sendable {
    private let keyBytes: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }

    /// 32 bytes, base64 (`openssl rand -base64 32`).
    public init?(base64 text: String) {
        guard let bytes = Self.bytes(base64: text.trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count == 32
        else { return nil }
        keyBytes = bytes
    }

    public func seal(_ password: String, name: String, tokenHash: String) -> String {
        // ChaChaPoly only throws for a malformed key or nonce, which cannot be made here.
        let box = try! ChaChaPoly.seal(
            Array(password.utf8), using: key, authenticating: Self.context(name: name, tokenHash: tokenHash))
        return box.combined.base64EncodedString()
    }

    /// Nil when it was not sealed with this key for this name and token.
    public func open(_ sealed: String, name: String, tokenHash: String) -> String? {
        guard let combined = Self.bytes(base64: sealed), let box = try? ChaChaPoly.SealedBox(combined: combined),
            let plain = try? ChaChaPoly.open(
                box, using: key, authenticating: Self.context(name: name, tokenHash: tokenHash))
        else { return nil }
        return String(bytes: plain, encoding: .utf8)
    }

    private static func context(name: String, tokenHash: String) -> [UInt8] {
        Array("geochat.login.v1\u{0}\(name)\u{0}\(tokenHash)".utf8)
    }

    private static func bytes(base64 text: String) -> [UInt8]? {
        Data(base64Encoded: text).map { Array($0) }
    }
}
