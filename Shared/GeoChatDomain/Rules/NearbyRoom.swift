import Foundation

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
