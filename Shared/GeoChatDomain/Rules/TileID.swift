import Foundation

/// A Web Mercator map tile: zoom `z` (0…30) splits the world into 2^z × 2^z
/// tiles, `x` east from the antimeridian and `y` south from the north edge.
public struct TileID: Hashable, Sendable, Codable {
    public let x: Int
    public let y: Int
    public let z: Int
    public static let zooms = 0...30

    public init?(x: Int, y: Int, z: Int) {
        guard Self.zooms.contains(z), (0..<(1 << z)).contains(x), (0..<(1 << z)).contains(y) else { return nil }
        self.x = x
        self.y = y
        self.z = z
    }

    /// The tile holding the point at zoom `z` (a point on a tile's east or south
    /// edge belongs to the next tile, the world's last edge to the last tile).
    public init?(containing point: MercatorPoint, z: Int) {
        guard Self.zooms.contains(z) else { return nil }
        let side = 1 << z
        self.init(
            x: min(Int(point.x * Double(side)), side - 1), y: min(Int(point.y * Double(side)), side - 1), z: z)
    }

    /// The tile's area in Mercator values (edges included).
    public var bounds: MercatorBox {
        let side = Double(1 << z)
        return MercatorBox(
            MercatorPoint(x: Double(x) / side, y: Double(y) / side)!,
            MercatorPoint(x: Double(x + 1) / side, y: Double(y + 1) / side)!)
    }

    /// The tile's centre, in Mercator values.
    public var center: MercatorPoint {
        let side = Double(1 << z)
        return MercatorPoint(x: (Double(x) + 0.5) / side, y: (Double(y) + 0.5) / side)!
    }
}
