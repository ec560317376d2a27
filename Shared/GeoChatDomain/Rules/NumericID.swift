/// An id that is a positive 64-bit number on the wire, in PostgreSQL and in
/// the phones' protocol, and a type of its own in code, so a room's id cannot
/// be passed where a message's is meant. JSON carries the bare number.
public protocol NumericID: RawRepresentable, Hashable, Comparable, Codable, Sendable,
    ExpressibleByIntegerLiteral, LosslessStringConvertible
where RawValue == Int64 {
    init(rawValue: Int64)
}

extension NumericID {
    public init(_ value: Int64) { self.init(rawValue: value) }
    public init(integerLiteral value: Int64) { self.init(rawValue: value) }

    /// Decimal digits as a request spells them (Swift's `Int64` syntax); nil otherwise.
    public init?(_ description: String) {
        guard let value = Int64(description) else { return nil }
        self.init(rawValue: value)
    }

    public var description: String { String(rawValue) }

    /// Above every id: an open upper bound.
    public static var max: Self { Self(rawValue: .max) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(Int64.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
