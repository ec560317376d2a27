import GeoChatDomain
import PropertyBased
import Testing

/// Degrees ↔ Mercator values ↔ tiles (`Coordinates`), both ways, to 1e-9.
@Suite struct CoordinatesTests {
    static let tolerance = 1e-9
    static let latitude = Gen.double(in: -Coordinates.maxLatitude...Coordinates.maxLatitude)
    static let longitude = Gen.double(in: -180...180)
    static let unit = Gen.double(in: 0...1)

    @Test func degreesToMercatorAndBack() async {
        await propertyCheck(count: 5000, input: Self.latitude, Self.longitude) { latitude, longitude in
            let place = GeoPoint(latitude: latitude, longitude: longitude)!
            let back = GeoPoint(place.mercator)
            #expect(abs(back.latitude - latitude) <= Self.tolerance, "\(latitude) → \(back.latitude)")
            #expect(abs(back.longitude - longitude) <= Self.tolerance, "\(longitude) → \(back.longitude)")
        }
    }

    @Test func mercatorToDegreesAndBack() async {
        await propertyCheck(count: 5000, input: Self.unit, Self.unit) { x, y in
            let point = MercatorPoint(x: x, y: y)!
            let back = GeoPoint(point).mercator
            #expect(abs(back.x - x) <= Self.tolerance && abs(back.y - y) <= Self.tolerance, "(\(x), \(y)) → \(back)")
        }
    }

    @Test func aPointLiesInItsTileAndATilesCentreNamesTheTile() async {
        await propertyCheck(count: 5000, input: Self.unit, Self.unit, Gen<Int>.value(in: 0...30)) { x, y, z in
            let point = MercatorPoint(x: x, y: y)!
            let tile = TileID(containing: point, z: z)!
            #expect(tile.bounds.contains(point), "\(point) outside \(tile)")
            #expect(TileID(containing: tile.center, z: z) == tile)
            #expect(TileID(x: tile.x, y: tile.y, z: z) == tile)
        }
    }

    /// Contract 2's landmarks, and the names of well-known tiles.
    @Test func knownPlaces() throws {
        let equatorOnGreenwich = try #require(GeoPoint(latitude: 0, longitude: 0)).mercator
        #expect(equatorOnGreenwich.x == 0.5 && abs(equatorOnGreenwich.y - 0.5) <= Self.tolerance)
        let northEdge = try #require(GeoPoint(latitude: Coordinates.maxLatitude, longitude: -180)).mercator
        #expect(northEdge.x == 0 && abs(northEdge.y) <= Self.tolerance)
        #expect(abs(GeoPoint(MercatorPoint(x: 1, y: 1)!).latitude + Coordinates.maxLatitude) <= Self.tolerance)
        // Berlin's Brandenburg Gate at zoom 12 is OpenStreetMap's tile 2200/1343.
        let gate = try #require(GeoPoint(latitude: 52.516_3, longitude: 13.377_7)).mercator
        #expect(TileID(containing: gate, z: 12) == TileID(x: 2200, y: 1343, z: 12))
        #expect(TileID(containing: MercatorPoint(x: 1, y: 1)!, z: 3) == TileID(x: 7, y: 7, z: 3))
        // The legacy degree initializer is the same formula.
        let legacy = try #require(MercatorPoint(longitude: 13.3777, latitude: 52.5163))
        #expect(legacy == gate)
    }

    @Test func outsideTheMapIsRefused() {
        #expect(GeoPoint(latitude: 85.06, longitude: 0) == nil)
        #expect(GeoPoint(latitude: 0, longitude: 180.000_001) == nil)
        #expect(GeoPoint(latitude: .nan, longitude: 0) == nil)
        #expect(TileID(x: 8, y: 0, z: 3) == nil)
        #expect(TileID(x: 0, y: 0, z: 31) == nil)
        #expect(TileID(containing: MercatorPoint(x: 0.5, y: 0.5)!, z: -1) == nil)
    }
}
