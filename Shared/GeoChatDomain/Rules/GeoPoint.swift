import Foundation

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
