import Foundation

/// The one home for the three ways GeoChat names a place, each convertible to
/// the others both ways:
/// - WGS 84 degrees (`GeoPoint`), what people and the JSON API speak;
/// - normalized Mercator values (`MercatorPoint`, contract 2), what the phones
///   speak and what rooms are stored in;
/// - map tiles (`TileID`, x/y/z of the Web Mercator scheme, y down from the north).
/// The formulas are contract 2's and their inverses; `CoordinatesTests`
/// checks every round trip to 1e-9.
public enum Coordinates {
    /// The latitude where Mercator's y reaches 0 (north) and 1 (south):
    /// atan(sinh(π)) in degrees.
    public static let maxLatitude = 85.051_128_779_806_59

    static func x(longitude: Double) -> Double { (longitude + 180) / 360 }

    static func y(latitude: Double) -> Double {
        let radians = latitude * .pi / 180
        return (1 - log(tan(radians) + 1 / cos(radians)) / .pi) / 2
    }

    static func longitude(x: Double) -> Double { x * 360 - 180 }

    static func latitude(y: Double) -> Double { atan(sinh(.pi * (1 - 2 * y))) * 180 / .pi }
}

/// A position in WGS 84 degrees, within Mercator's reach (±85.0511° latitude)
/// and one turn of longitude (−180…180).
public struct GeoPoint: Hashable, Sendable, Codable {
    public let latitude: Double
    public let longitude: Double

    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= Coordinates.maxLatitude,
            (-180...180).contains(longitude)
        else { return nil }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The place a Mercator point names (exact inverse of `mercator`).
    public init(_ point: MercatorPoint) {
        latitude = min(max(Coordinates.latitude(y: point.y), -Coordinates.maxLatitude), Coordinates.maxLatitude)
        longitude = Coordinates.longitude(x: point.x)
    }

    public var mercator: MercatorPoint {
        // In range by construction; the clamp absorbs the last bit of rounding at the edges.
        MercatorPoint(
            x: min(max(Coordinates.x(longitude: longitude), 0), 1), y: min(max(Coordinates.y(latitude: latitude), 0), 1)
        )!
    }
}

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
