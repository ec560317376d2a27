import GatewayCore
import GeoChatDomain
import Hummingbird

/// Places given in either unit, from a query or a JSON body.
enum APIPlaces {
    enum Given {
        case degrees(GeoPoint)
        case mercator(MercatorPoint)

        var place: GeoPoint {
            switch self {
            case .degrees(let place): place
            case .mercator(let point): GeoPoint(point)
            }
        }

        /// Mercator values as given, not converted twice.
        var position: MercatorPoint {
            switch self {
            case .degrees(let place): place.mercator
            case .mercator(let point): point
            }
        }
    }

    static func place(latitude: Double?, longitude: Double?, x: Double?, y: Double?) throws(ProtocolError) -> GeoPoint {
        try given(latitude: latitude, longitude: longitude, x: x, y: y).place
    }

    static func given(latitude: Double?, longitude: Double?, x: Double?, y: Double?) throws(ProtocolError) -> Given {
        if (latitude != nil || longitude != nil) && (x != nil || y != nil) {
            throw .bad(
                "x", "cannot be given with 'latitude' and 'longitude': a place is in degrees or in Mercator values")
        }
        if latitude != nil || longitude != nil {
            guard let latitude else { throw .missing("latitude") }
            guard let longitude else { throw .missing("longitude") }
            guard latitude.isFinite, abs(latitude) <= Coordinates.maxLatitude else {
                throw .bad("latitude", "must be from -85.0511 to 85.0511 (the map's edge)")
            }
            guard let place = GeoPoint(latitude: latitude, longitude: longitude) else {
                throw .bad("longitude", "must be from -180 to 180")
            }
            return .degrees(place)
        }
        guard let x else { throw .missing(y == nil ? "latitude" : "x") }
        guard let y else { throw .missing("y") }
        guard let point = MercatorPoint(x: x, y: y) else { throw .bad("x", "and 'y' must be from 0 to 1") }
        return .mercator(point)
    }
}
