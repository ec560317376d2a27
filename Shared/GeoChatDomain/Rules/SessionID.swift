/// A session id: 26 characters of `0-9a-v` (base 32), 130 bits drawn from the
/// system's cryptographic random source (getrandom on Linux).
public struct SessionID: Hashable, Sendable, Codable, CustomStringConvertible {
    public static let length = 26
    static let alphabet = Array("0123456789abcdefghijklmnopqrstuv".utf8)

    public let value: String

    /// Accepts only the exact shape; anything else cannot be a session we issued.
    public init?(_ raw: String) {
        let bytes = raw.utf8
        guard bytes.count == Self.length,
            bytes.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x76).contains($0) })
        else { return nil }
        self.value = raw
    }

    public static func random() -> SessionID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> SessionID {
        var bytes = [UInt8]()
        bytes.reserveCapacity(length)
        for _ in 0..<length {
            bytes.append(alphabet[Int(generator.next(upperBound: UInt8(32)))])
        }
        return SessionID(unchecked: String(decoding: bytes, as: UTF8.self))
    }

    init(unchecked value: String) { self.value = value }

    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        guard let id = SessionID(raw) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a session id"))
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    /// Never print a session id in full: it is a bearer secret. Logs get a short prefix.
    public var description: String { String(value.prefix(6)) + "…" }
}
