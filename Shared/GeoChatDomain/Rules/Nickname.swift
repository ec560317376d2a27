/// A nickname: an ASCII letter, then ASCII letters, digits or `_`; 1 to 32 characters.
/// The single source of this rule for every service. On the wire a string,
/// checked again when decoded (`StartSession`, `RenameSession`), so a command
/// cannot carry a nickname the rule refuses.
public struct Nickname: Hashable, Sendable, Codable, CustomStringConvertible {
    public let value: String

    public init?(_ raw: String) {
        let bytes = Array(raw.utf8)
        guard Limits.nicknameLength.contains(bytes.count), let first = bytes.first, first.isASCIILetter else {
            return nil
        }
        guard bytes.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit || $0 == UInt8(ascii: "_") }) else {
            return nil
        }
        self.value = raw
    }

    public var description: String { value }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let nick = Nickname(try container.decode(String.self)) else {
            throw DecodingError.ruleBroken(.invalidNick, in: container)
        }
        self = nick
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

extension UInt8 {
    var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    var isASCIIDigit: Bool { (0x30...0x39).contains(self) }
}
