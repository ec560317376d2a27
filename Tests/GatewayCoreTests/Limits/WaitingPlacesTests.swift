import Testing

@testable import GatewayCore

/// Streams and long polls share one count, per gateway and per address.
@Suite struct WaitingPlacesTests {
    @Test func oneAddressCannotTakeEveryPlace() {
        let places = WaitingPlaces(perGateway: 5, perAddress: 2)
        var held = [places.take(address: "a"), places.take(address: "a")].compactMap { try? $0.get() }
        #expect(held.count == 2)
        #expect(places.take(address: "a") == .failure(.addressFull))
        held += [places.take(address: "b"), places.take(address: "b"), places.take(address: "c")].compactMap {
            try? $0.get()
        }
        #expect(places.taken == 5)
        #expect(places.take(address: "d") == .failure(.gatewayFull))
        held.removeFirst()
        #expect(places.taken == 4 && places.taken(by: "a") == 1, "a place goes back with its holder")
        #expect((try? places.take(address: "a").get()) != nil)
    }
}

extension Result<WaitingPlaces.Place, WaitingPlaces.Refusal> {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.failure(let a), .failure(let b)): a == b
        default: false
        }
    }
}
