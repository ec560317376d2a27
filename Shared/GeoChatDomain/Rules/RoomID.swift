/// A room's id: positive, from one database sequence, never reused.
public struct RoomID: NumericID {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
}
