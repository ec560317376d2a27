import GeoChatDomain
import Synchronization

/// One outstanding request: the reply may arrive before or after someone waits.
final class ReplyWaiter: Sendable {
    private enum State {
        case pending(CheckedContinuation<ReplyEnvelope, any Error>?)
        case finished(Result<ReplyEnvelope, RequestError>)
    }

    private let state = Mutex<State>(.pending(nil))
    let deadline: ContinuousClock.Instant

    init(deadline: ContinuousClock.Instant) { self.deadline = deadline }

    func finish(_ result: Result<ReplyEnvelope, RequestError>) {
        let waiting = state.withLock { state -> CheckedContinuation<ReplyEnvelope, any Error>? in
            guard case .pending(let continuation) = state else { return nil }
            state = .finished(result)
            return continuation
        }
        waiting?.resume(with: result.mapError { $0 as any Error })
    }

    func wait() async throws -> ReplyEnvelope {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<ReplyEnvelope, RequestError>? in
                switch state {
                case .pending: state = .pending(continuation); return nil
                case .finished(let result): return result
                }
            }
            if let ready { continuation.resume(with: ready.mapError { $0 as any Error }) }
        }
    }
}
