/// A nickname: an ASCII letter, then ASCII letters, digits or `_`; 1 to 32 characters.
/// The single source of this rule for every service.
public struct Nickname: Hashable, Sendable, CustomStringConvertible {
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
}

extension UInt8 {
    var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    var isASCIIDigit: Bool { (0x30...0x39).contains(self) }
}
