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
