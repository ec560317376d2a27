/// How many rooms there are and a checksum of their ids, as the rooms service
/// stores them and as a gateway's index holds them: equal tallies mean the
/// same set of rooms (a room's place, zoom and topic never change).
public struct RoomTally: Codable, Sendable, Equatable {
    public var count: Int
    /// The sum of the ids modulo 2^62 (`PostgresRoomStore.tally` computes the same in SQL).
    public var idChecksum: Int64

    public init(count: Int, idChecksum: Int64) {
        self.count = count
        self.idChecksum = idChecksum
    }

    /// 2^62: a checksum of positive ids stays a positive `bigint` in SQL.
    public static let checksumModulus: Int64 = 1 << 62

    /// The tally of a sum of ids kept with wrapping arithmetic (mod 2^64, a multiple of the modulus).
    public init(count: Int, wrappingIDSum: UInt64) {
        self.init(count: count, idChecksum: Int64(wrappingIDSum % UInt64(Self.checksumModulus)))
    }
}
