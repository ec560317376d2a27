import CRdKafka
import Foundation
import Synchronization

/// What librdkafka told a producer outside of delivery reports.
final class ProducerSignals: Sendable {
    /// Every broker was unreachable at some point: it may come back without
    /// its memory (and without our producer id).
    let lostAllBrokers = Atomic<Bool>(false)
}
