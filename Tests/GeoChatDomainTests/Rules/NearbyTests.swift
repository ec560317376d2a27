import Foundation
import GeoChatDomain
import PropertyBased
import Testing

/// Distances, bearings and the shapes of nearby queries (`NearbyQuery.swift`, `NearbyRoom.swift`, `Geodesy.swift`), and
/// the transcript's text form.
@Suite struct NearbyTests {
    static let latitude = Gen.double(in: -80...80)
    static let longitude = Gen.double(in: -180...180)

    static func place(_ latitude: Double, _ longitude: Double) -> GeoPoint {
        GeoPoint(latitude: latitude, longitude: longitude)!
    }

    @Test func knownDistancesAndBearings() {
        let berlin = Self.place(52.5163, 13.3777)
        let paris = Self.place(48.8584, 2.2945)
        // Brandenburg Gate to the Eiffel Tower: 879.09 km and 246.86° on the mean
        // sphere (worked out apart from this code; the ellipsoid says about 878 km).
        #expect(abs(Geodesy.distance(berlin, paris) - 879_088) < 100)
        #expect(abs(Geodesy.bearing(from: berlin, to: paris) - 246.86) < 0.05)
        let origin = Self.place(0, 0)
        #expect(abs(Geodesy.distance(origin, Self.place(0, 1)) - 111_195) < 1)
        #expect(Geodesy.bearing(from: origin, to: Self.place(1, 0)) == 0)
        #expect(abs(Geodesy.bearing(from: origin, to: Self.place(0, 1)) - 90) < 1e-9)
        #expect(abs(Geodesy.bearing(from: origin, to: Self.place(0, -1)) - 270) < 1e-9)
        #expect(Geodesy.angle(between: 350, and: 10) == 20)
    }

    /// Every place within the radius lies in one of the query's boxes, near
    /// the antimeridian and the map's edges too.
    @Test func theBoxesHoldEveryPlaceWithinTheRadius() async {
        let radius = Gen.double(in: 1...3_000_000)
        let fraction = Gen.double(in: 0...0.999)
        let direction = Gen.double(in: 0..<360)
        await propertyCheck(count: 3000, input: Self.latitude, Self.longitude, radius, fraction, direction) {
            latitude, longitude, radius, fraction, direction in
            let center = Self.place(latitude, longitude)
            let query = NearbyQuery(center: center, radiusMetres: radius, limit: 10, zooms: 0...17)!
            // The place `fraction` of the radius away in `direction`.
            let d = radius * fraction / Geodesy.earthRadiusMetres
            let θ = direction * .pi / 180
            let φ1 = latitude * .pi / 180
            let λ1 = longitude * .pi / 180
            let φ2 = asin(sin(φ1) * cos(d) + cos(φ1) * sin(d) * cos(θ))
            var λ2 = λ1 + atan2(sin(θ) * sin(d) * cos(φ1), cos(d) - sin(φ1) * sin(φ2))
            λ2 = (λ2 + 3 * .pi).truncatingRemainder(dividingBy: 2 * .pi) - .pi
            // Beyond the map: nothing to check.
            guard let there = GeoPoint(latitude: φ2 * 180 / .pi, longitude: λ2 * 180 / .pi) else { return }
            #expect(query.boxes.contains { $0.contains(there.mercator) }, "\(center) r=\(radius) → \(there)")
        }
    }

    @Test func aSectorAdmitsOnlyItsDirections() {
        let center = Self.place(10, 10)
        let query = NearbyQuery(
            center: center, radiusMetres: 10_000, limit: 5, zooms: 0...17,
            shape: .sector(direction: 350, fieldOfView: 40))!
        #expect(query.admits(center, distance: 5000, bearing: 5))
        #expect(query.admits(center, distance: 5000, bearing: 331))
        #expect(!query.admits(center, distance: 5000, bearing: 20))
        #expect(!query.admits(center, distance: 5000, bearing: 180))
        #expect(!query.admits(center, distance: 10_001, bearing: 350), "beyond the radius")
        #expect(query.admits(center, distance: 0, bearing: 0), "the point itself is in every direction")
    }

    @Test func anEllipseAdmitsAlongItsMajorAxisOnly() {
        let center = Self.place(10, 10)
        // 10 km along north-east, 2 km across.
        let query = NearbyQuery(
            center: center, radiusMetres: 10_000, limit: 5, zooms: 0...17,
            shape: .ellipse(semiMajor: 10_000, semiMinor: 2_000, orientation: 45))!
        #expect(query.admits(center, distance: 9_000, bearing: 45))
        #expect(query.admits(center, distance: 9_000, bearing: 225))
        #expect(!query.admits(center, distance: 3_000, bearing: 135))
        #expect(query.admits(center, distance: 1_900, bearing: 135))
        #expect(
            NearbyQuery(
                center: center, radiusMetres: 10_000, limit: 5, zooms: 0...17,
                shape: .ellipse(semiMajor: 10_000, semiMinor: 20_000, orientation: 0)) == nil,
            "the minor axis is the shorter")
    }

    @Test func outOfRangeQueriesAreRefused() {
        let center = Self.place(0, 0)
        #expect(NearbyQuery(center: center, radiusMetres: 0, limit: 5, zooms: 0...17) == nil)
        #expect(NearbyQuery(center: center, radiusMetres: .infinity, limit: 5, zooms: 0...17) == nil)
        #expect(NearbyQuery(center: center, radiusMetres: 100, limit: 0, zooms: 0...17) == nil)
        #expect(NearbyQuery(center: center, radiusMetres: 100, limit: 101, zooms: 0...17) == nil)
        #expect(NearbyQuery(center: center, radiusMetres: 100, limit: 5, zooms: 0...18) == nil)
    }

    @Test func aTranscriptLineIsOneMessageWithControlsEscaped() {
        let message = ChatMessage(
            room: 7, id: 3, nick: "Lydia", text: "two\nlines \u{1B}[2J", addedAt: 1_795_000_000_000)
        #expect(Transcript.line(message) == "2026-11-18T11:06:40Z <Lydia> two\n  lines \\u{1B}[2J\n")
    }
}
