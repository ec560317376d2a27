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

/// A room's id: positive, from one database sequence, never reused.
public struct RoomID: NumericID {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
}

/// A message's id: positive, dense and strictly increasing within its room,
/// so the ids of a room step one by one (`Strideable`: ranges of ids, `+` and `-` by a count).
public struct MessageID: NumericID, Strideable {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }

    // Stated here: `Strideable` brings a `<` of its own besides `NumericID`'s.
    public static func < (lhs: MessageID, rhs: MessageID) -> Bool { lhs.rawValue < rhs.rawValue }

    public func distance(to other: MessageID) -> Int64 { other.rawValue - rawValue }
    public func advanced(by n: Int64) -> MessageID { MessageID(rawValue: rawValue + n) }

    public static func + (id: MessageID, steps: Int64) -> MessageID { id.advanced(by: steps) }
    public static func - (id: MessageID, steps: Int64) -> MessageID { id.advanced(by: -steps) }
    /// How many ids apart two messages of a room are.
    public static func - (later: MessageID, earlier: MessageID) -> Int64 { earlier.distance(to: later) }
}
