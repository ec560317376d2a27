import GeoChatDomain
import GeoChatTestSupport
import Testing

@testable import GatewayCore

/// The index's nearby search answers what a scan of every room answers.
@Suite struct RoomIndexNearestTests {
    static func expected(_ rooms: [RoomInfo], _ query: NearbyQuery) -> [(RoomID, Double)] {
        rooms.compactMap { room -> (RoomID, Double)? in
            guard query.zooms.contains(room.zoom.value) else { return nil }
            let place = GeoPoint(room.position)
            let distance = Geodesy.distance(query.center, place)
            guard query.admits(place, distance: distance, bearing: Geodesy.bearing(from: query.center, to: place))
            else {
                return nil
            }
            return (room.id, distance)
        }
        .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
        .prefix(query.limit)
        .map { $0 }
    }

    @Test func nearestMatchesAScanOfEveryRoom() {
        var random = SeededRandom(seed: 15)
        var index = RoomIndex()
        var rooms: [RoomInfo] = []
        // Rooms around a few places (one on the antimeridian, one far north) and anywhere.
        let places = [(52.5, 13.4), (0.0, 179.99), (80.0, -20.0), (-33.9, 151.2)]
        for id in 1...4000 {
            let (latitude, longitude): (Double, Double)
            if id % 4 == 0 {
                latitude = Double(random.next(upTo: 160_000)) / 1000 - 80
                longitude = Double(random.next(upTo: 360_000)) / 1000 - 180
            } else {
                let (lat, lon) = places[Int(random.next(upTo: UInt64(places.count)))]
                latitude = lat + (Double(random.next(upTo: 2000)) - 1000) / 10_000
                var wrapped = lon + (Double(random.next(upTo: 2000)) - 1000) / 10_000
                if wrapped > 180 { wrapped -= 360 }
                longitude = wrapped
            }
            let place = GeoPoint(latitude: latitude, longitude: longitude)!
            let room = RoomInfo(
                id: RoomID(Int64(id)), position: place.mercator, zoom: ZoomLevel(Int(random.next(upTo: 18)))!,
                topic: "r\(id)")
            rooms.append(room)
            index.upsert(room, visitedAtMs: Int64(id))
        }
        let shapes: [NearbyQuery.Shape] = [
            .circle, .sector(direction: 90, fieldOfView: 60), .sector(direction: 0, fieldOfView: 30),
        ]
        var compared = 0
        for (latitude, longitude) in places + [(10.0, 10.0)] {
            for radius in [500.0, 5_000, 50_000, 2_000_000] {
                for limit in [1, 10, 100] {
                    for shape in shapes {
                        for zooms in [0...17, 5...9] {
                            let query = NearbyQuery(
                                center: GeoPoint(latitude: latitude, longitude: longitude)!, radiusMetres: radius,
                                limit: limit, zooms: zooms, shape: shape)!
                            let want = Self.expected(rooms, query)
                            let got = index.nearest(query)
                            #expect(
                                got.map(\.room.id) == want.map(\.0),
                                "\(latitude),\(longitude) r=\(radius) n=\(limit) \(shape)")
                            for (found, (_, distance)) in zip(got, want) {
                                #expect(abs(found.distanceMetres - distance) < 1e-6)
                            }
                            compared += 1
                        }
                    }
                }
            }
        }
        #expect(compared == 5 * 4 * 3 * 3 * 2)
        // An ellipse across the antimeridian.
        let ellipse = NearbyQuery(
            center: GeoPoint(latitude: 0, longitude: 179.99)!, radiusMetres: 8_000, limit: 100, zooms: 0...17,
            shape: .ellipse(semiMajor: 8_000, semiMinor: 3_000, orientation: 90))!
        let found = index.nearest(ellipse).map(\.room.id)
        #expect(found == Self.expected(rooms, ellipse).map(\.0))
        #expect(
            found.contains { GeoPoint(rooms[Int($0.rawValue) - 1].position).longitude < 0 },
            "rooms west of the antimeridian are found")

        // Removed rooms are never found.
        for room in rooms where room.id.rawValue % 3 == 0 { index.remove(room.id) }
        let left = rooms.filter { $0.id.rawValue % 3 != 0 }
        for (latitude, longitude) in places {
            let query = NearbyQuery(
                center: GeoPoint(latitude: latitude, longitude: longitude)!, radiusMetres: 50_000, limit: 100,
                zooms: 0...17)!
            #expect(index.nearest(query).map(\.room.id) == Self.expected(left, query).map(\.0))
        }
    }
}
