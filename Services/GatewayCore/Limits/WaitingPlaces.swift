import Synchronization

/// Places for the clients that wait on this gateway, push streams and long
/// polls counted together: at most `perGateway` in all (what the gateway's
/// memory allows, `PushSettings`) and `perAddress` for one client address, so
/// that one client cannot take every place. A place is given back when the
/// `Place` that holds it goes.
package final class WaitingPlaces: Sendable {
    private struct Counts {
        var total = 0
        var byAddress: [String: Int] = [:]
    }

    private let counts = Mutex(Counts())
    package let perGateway: Int
    /// 0: no cap per address.
    package let perAddress: Int

    package init(perGateway: Int, perAddress: Int) {
        self.perGateway = perGateway
        self.perAddress = perAddress
    }

    /// A place held; given back on deinit.
    package final class Place: Sendable {
        private let places: WaitingPlaces
        package let address: String

        fileprivate init(_ places: WaitingPlaces, _ address: String) {
            self.places = places
            self.address = address
        }

        deinit { places.giveBack(address) }
    }

    package enum Refusal: Error, Equatable {
        /// This gateway holds its most waiting clients.
        case gatewayFull
        /// This client address holds its most.
        case addressFull
    }

    package func take(address: String) -> Result<Place, Refusal> {
        let refusal = counts.withLock { counts -> Refusal? in
            guard counts.total < perGateway else { return .gatewayFull }
            let held = counts.byAddress[address, default: 0]
            guard perAddress <= 0 || held < perAddress else { return .addressFull }
            counts.total += 1
            counts.byAddress[address] = held + 1
            return nil
        }
        if let refusal { return .failure(refusal) }
        return .success(Place(self, address))
    }

    private func giveBack(_ address: String) {
        counts.withLock { counts in
            counts.total -= 1
            let held = counts.byAddress[address, default: 1] - 1
            counts.byAddress[address] = held > 0 ? held : nil
        }
    }

    /// Places held now, in all and by one address.
    package var taken: Int { counts.withLock { $0.total } }
    package func taken(by address: String) -> Int { counts.withLock { $0.byAddress[address, default: 0] } }
}
