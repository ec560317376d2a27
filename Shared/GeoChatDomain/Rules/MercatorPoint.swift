/// A position in normalized Mercator values ("MP values"): x east from the
/// antimeridian, y south from the north edge, both in [0, 1] (contract 2).
public struct MercatorPoint: Hashable, Sendable, Codable {
    public let x: Double
    public let y: Double

    public init?(x: Double, y: Double) {
        guard Self.isValidCoordinate(x), Self.isValidCoordinate(y) else { return nil }
        self.x = x
        self.y = y
    }

    public static func isValidCoordinate(_ value: Double) -> Bool {
        value.isFinite && value >= 0 && value <= 1
    }

    /// Only what a decimal number is spelt with: digits, `.`, signs and exponents
    /// (no `nan`, `inf` or hexadecimal floats, which `Double(_:)` would also read).
    public static func isDecimalSpelling(_ raw: some StringProtocol) -> Bool {
        !raw.isEmpty
            && raw.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D || $0 == 0x2B || $0 == 0x65 || $0 == 0x45
            }
    }

    /// From degrees (contract 2's formulas, `Coordinates`); nil outside the map.
    public init?(longitude: Double, latitude: Double) {
        self.init(x: Coordinates.x(longitude: longitude), y: Coordinates.y(latitude: latitude))
    }
}

/// A box given by two opposite corners in any order; edges are inside.
public struct MercatorBox: Hashable, Sendable, Codable {
    public let minX: Double, minY: Double, maxX: Double, maxY: Double

    public init(_ a: MercatorPoint, _ b: MercatorPoint) {
        minX = Swift.min(a.x, b.x)
        maxX = Swift.max(a.x, b.x)
        minY = Swift.min(a.y, b.y)
        maxY = Swift.max(a.y, b.y)
    }

    public func contains(_ p: MercatorPoint) -> Bool {
        p.x >= minX && p.x <= maxX && p.y >= minY && p.y <= maxY
    }
}
