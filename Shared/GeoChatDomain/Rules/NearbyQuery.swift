import Foundation

/// "Which rooms are near me": the N nearest rooms within a radius of a point,
/// optionally only in a direction (a field of view) or inside an ellipse, as
/// the location-to-service model (LoST, RFC 5222) shapes its questions.
/// Distances are great-circle metres on a sphere of the Earth's mean radius.
public struct NearbyQuery: Sendable, Equatable {
    public enum Shape: Sendable, Equatable {
        /// Everything within the radius.
        case circle
        /// Within the radius and within `fieldOfView / 2` of the bearing
        /// `direction` (degrees clockwise from north).
        case sector(direction: Double, fieldOfView: Double)
        /// Inside the ellipse around the point: semi-axes in metres, the major
        /// axis `orientation` degrees clockwise from north (GML's ellipse).
        /// The radius is the semi-major axis.
        case ellipse(semiMajor: Double, semiMinor: Double, orientation: Double)
    }

    public let center: GeoPoint
    public let radiusMetres: Double
    public let limit: Int
    public let zooms: ClosedRange<Int>
    public let shape: Shape

    /// Half the Earth's circumference: every place is within it.
    public static let maxRadiusMetres = 20_037_509.0
    public static let limits = 1...100
    public static let defaultLimit = 10

    /// Nil when a value is outside its range (the caller names the field).
    public init?(center: GeoPoint, radiusMetres: Double, limit: Int, zooms: ClosedRange<Int>, shape: Shape = .circle) {
        guard radiusMetres.isFinite, radiusMetres > 0, radiusMetres <= Self.maxRadiusMetres,
            Self.limits.contains(limit), ZoomLevel.range.contains(zooms.lowerBound),
            ZoomLevel.range.contains(zooms.upperBound)
        else { return nil }
        switch shape {
        case .circle: break
        case .sector(let direction, let fieldOfView):
            guard direction.isFinite, fieldOfView.isFinite, fieldOfView > 0, fieldOfView <= 360 else { return nil }
        case .ellipse(let semiMajor, let semiMinor, let orientation):
            guard semiMajor.isFinite, semiMinor.isFinite, orientation.isFinite, semiMinor > 0, semiMinor <= semiMajor,
                semiMajor == radiusMetres
            else { return nil }
        }
        self.center = center
        self.radiusMetres = radiusMetres
        self.limit = limit
        self.zooms = zooms
        self.shape = shape
    }

    /// Whether a place at this distance and bearing from the centre answers the query.
    public func admits(_ place: GeoPoint, distance: Double, bearing: Double) -> Bool {
        guard distance <= radiusMetres else { return false }
        switch shape {
        case .circle:
            return true
        case .sector(let direction, let fieldOfView):
            if distance == 0 || fieldOfView >= 360 { return true }
            return Geodesy.angle(between: bearing, and: direction) <= fieldOfView / 2
        case .ellipse(let a, let b, let orientation):
            // In the plane tangent at the centre: metres along the major and minor axes.
            let turn = (bearing - orientation) * .pi / 180
            let u = distance * cos(turn)
            let v = distance * sin(turn)
            return (u * u) / (a * a) + (v * v) / (b * b) <= 1
        }
    }

    /// The Mercator boxes that hold every place within the radius: one, or two
    /// when the circle crosses the antimeridian.
    public var boxes: [MercatorBox] {
        let r = radiusMetres / Geodesy.earthRadiusMetres
        let latitude = center.latitude * .pi / 180
        let south = max(center.latitude - r * 180 / .pi, -Coordinates.maxLatitude)
        let north = min(center.latitude + r * 180 / .pi, Coordinates.maxLatitude)
        // A circle reaching a pole (or wider than the parallel allows) spans every longitude.
        let spread = sin(r) / cos(latitude)
        guard r < .pi / 2, spread < 1, north < Coordinates.maxLatitude, south > -Coordinates.maxLatitude else {
            return [Self.box(west: -180, south: south, east: 180, north: north)]
        }
        let halfWidth = asin(spread) * 180 / .pi
        let west = center.longitude - halfWidth
        let east = center.longitude + halfWidth
        if west < -180 {
            return [
                Self.box(west: west + 360, south: south, east: 180, north: north),
                Self.box(west: -180, south: south, east: east, north: north),
            ]
        }
        if east > 180 {
            return [
                Self.box(west: west, south: south, east: 180, north: north),
                Self.box(west: -180, south: south, east: east - 360, north: north),
            ]
        }
        return [Self.box(west: west, south: south, east: east, north: north)]
    }

    private static func box(west: Double, south: Double, east: Double, north: Double) -> MercatorBox {
        MercatorBox(
            GeoPoint(latitude: south, longitude: west)!.mercator, GeoPoint(latitude: north, longitude: east)!.mercator)
    }
}

/// A room that answers a nearby query, with where it lies from the query's point.
public struct NearbyRoom: Sendable, Equatable {
    public let room: RoomInfo
    public let distanceMetres: Double
    /// Degrees clockwise from north, 0 ≤ bearing < 360 (0 at the point itself).
    public let bearingDegrees: Double

    public init(room: RoomInfo, distanceMetres: Double, bearingDegrees: Double) {
        self.room = room
        self.distanceMetres = distanceMetres
        self.bearingDegrees = bearingDegrees
    }
}
