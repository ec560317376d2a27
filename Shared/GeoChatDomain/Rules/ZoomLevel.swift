/// A map zoom level, an integer 0…17. Rooms are shown within [z-3, z+3].
public struct ZoomLevel: Hashable, Comparable, Sendable, Codable {
    public static let range = 0...17
    public let value: Int

    public init?(_ value: Int) {
        guard Self.range.contains(value) else { return nil }
        self.value = value
    }

    public static func < (a: ZoomLevel, b: ZoomLevel) -> Bool { a.value < b.value }

    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(Int.self)
        guard let z = ZoomLevel(raw) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "zoom out of range"))
        }
        self = z
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(value)
    }
}
