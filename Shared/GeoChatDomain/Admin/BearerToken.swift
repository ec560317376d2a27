import Crypto
import Foundation

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
