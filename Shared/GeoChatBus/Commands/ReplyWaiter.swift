import Synchronization

/// One outstanding request: the reply may arrive before or after someone waits.
final class ReplyWaiter: Sendable {
    /// What ends a request: its reply record from the reply topic, or the
    /// reply itself where a record the requester reads anyway carried it (a
    /// say's message event, `CommandBus.answered`).
    enum Reply: Sendable {
        case record([UInt8])
        case value(any Sendable)
    }

    private enum State {
        case pending(CheckedContinuation<Reply, any Error>?)
        case finished(Result<Reply, RequestError>)
    }

    private let state = Mutex<State>(.pending(nil))
    let deadline: ContinuousClock.Instant

    init(deadline: ContinuousClock.Instant) { self.deadline = deadline }

    func finish(_ result: Result<Reply, RequestError>) {
        let waiting = state.withLock { state -> CheckedContinuation<Reply, any Error>? in
            guard case .pending(let continuation) = state else { return nil }
            state = .finished(result)
            return continuation
        }
        waiting?.resume(with: result.mapError { $0 as any Error })
    }

    func wait() async throws -> Reply {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<Reply, RequestError>? in
                switch state {
                case .pending:
                    state = .pending(continuation)
                    return nil
                case .finished(let result): return result
                }
            }
            if let ready { continuation.resume(with: ready.mapError { $0 as any Error }) }
        }
    }
}
