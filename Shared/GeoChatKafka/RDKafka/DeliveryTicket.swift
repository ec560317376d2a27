import CRdKafka
import Foundation
import Synchronization

/// One enqueued record's delivery: completed once, from librdkafka's poll
/// thread (or at once when the record could not be enqueued); awaited by any
/// number of waiters, before or after it completed.
final class DeliveryTicket: Sendable {
    private enum State {
        case pending([CheckedContinuation<DeliveryOutcome, Never>])
        case done(DeliveryOutcome)
    }

    private let state = Mutex<State>(.pending([]))

    func complete(_ outcome: DeliveryOutcome) {
        let waiters = state.withLock { state -> [CheckedContinuation<DeliveryOutcome, Never>] in
            guard case .pending(let waiters) = state else { return [] }
            state = .done(outcome)
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    func outcome() async -> DeliveryOutcome {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> DeliveryOutcome? in
                switch state {
                case .done(let outcome): return outcome
                case .pending(var waiters):
                    waiters.append(continuation)
                    state = .pending(waiters)
                    return nil
                }
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}

/// Carries a delivery result from librdkafka's poll thread back into Swift.
final class DeliveryCompletion: Sendable {
    let body: @Sendable (rd_kafka_resp_err_t) -> Void
    init(_ body: @escaping @Sendable (rd_kafka_resp_err_t) -> Void) { self.body = body }
}

/// How a send ended, in Swift terms.
enum DeliveryOutcome: Sendable, Equatable {
    case delivered
    /// Refused or timed out; `needsFreshProducer`: this handle cannot recover by itself.
    case failed(String, needsFreshProducer: Bool)
}

/// What librdkafka told a producer outside of delivery reports.
final class ProducerSignals: Sendable {
    /// Every broker was unreachable at some point: it may come back without
    /// its memory (and without our producer id).
    let lostAllBrokers = Atomic<Bool>(false)
}
