import Crypto
import Foundation

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
