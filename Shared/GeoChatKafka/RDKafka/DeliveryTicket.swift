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
