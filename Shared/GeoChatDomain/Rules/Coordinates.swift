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
