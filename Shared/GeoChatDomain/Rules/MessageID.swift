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
