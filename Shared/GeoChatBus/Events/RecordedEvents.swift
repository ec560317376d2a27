import Foundation
import GeoChatDomain
import GeoChatKafka
import Synchronization

/// Events kept in memory, for unit tests: what was published, in order, and a
/// switch to make publishing fail as a broker that refuses would.
public final class RecordedEvents: EventPublisher {
    public struct Refused: Error {}

    private let state = Mutex<(records: [EncodedEvent], refusing: Bool)>(([], false))

    public init() {}

    /// Recorded (or refused) at once, in call order.
    public func enqueue(_ record: EncodedEvent) -> RecordDelivery {
        let refused = state.withLock { state -> Bool in
            if state.refusing { return true }
            state.records.append(record)
            return false
        }
        return .completed(refused ? Refused() : nil)
    }

    /// Makes every publish fail (true) or succeed again (false).
    public func refuse(_ refusing: Bool) { state.withLock { $0.refusing = refusing } }

    /// The events of one type published so far, oldest first.
    public func published<Event: WireEvent>(_ type: Event.Type) -> [Event] {
        state.withLock { $0.records.compactMap { $0.decode(type) } }
    }

    public var count: Int { state.withLock { $0.records.count } }
}
