import Foundation

/// Great-circle distance and initial bearing on a sphere (haversine).
public enum Geodesy {
    /// The Earth's mean radius (IUGG).
    public static let earthRadiusMetres = 6_371_008.8

    public static func distance(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let φ1 = a.latitude * .pi / 180
        let φ2 = b.latitude * .pi / 180
        let dφ = φ2 - φ1
        let dλ = (b.longitude - a.longitude) * .pi / 180
        let h = sin(dφ / 2) * sin(dφ / 2) + cos(φ1) * cos(φ2) * sin(dλ / 2) * sin(dλ / 2)
        return 2 * earthRadiusMetres * asin(min(1, sqrt(h)))
    }

    /// The initial bearing from `a` to `b`, degrees clockwise from north in [0, 360).
    public static func bearing(from a: GeoPoint, to b: GeoPoint) -> Double {
        let φ1 = a.latitude * .pi / 180
        let φ2 = b.latitude * .pi / 180
        let dλ = (b.longitude - a.longitude) * .pi / 180
        let y = sin(dλ) * cos(φ2)
        let x = cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(dλ)
        if x == 0 && y == 0 { return 0 }
        let degrees = atan2(y, x) * 180 / .pi
        return degrees < 0 ? degrees + 360 : (degrees >= 360 ? degrees - 360 : degrees)
    }

    /// The smaller angle between two bearings, 0…180.
    public static func angle(between a: Double, and b: Double) -> Double {
        let d = (a - b).truncatingRemainder(dividingBy: 360)
        let positive = d < 0 ? d + 360 : d
        return min(positive, 360 - positive)
    }
}
