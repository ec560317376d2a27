import Synchronization

/// One outstanding request: the reply (its raw record) may arrive before or after someone waits.
final class ReplyWaiter: Sendable {
    private enum State {
        case pending(CheckedContinuation<[UInt8], any Error>?)
        case finished(Result<[UInt8], RequestError>)
    }

    private let state = Mutex<State>(.pending(nil))
    let deadline: ContinuousClock.Instant

    init(deadline: ContinuousClock.Instant) { self.deadline = deadline }

    func finish(_ result: Result<[UInt8], RequestError>) {
        let waiting = state.withLock { state -> CheckedContinuation<[UInt8], any Error>? in
            guard case .pending(let continuation) = state else { return nil }
            state = .finished(result)
            return continuation
        }
        waiting?.resume(with: result.mapError { $0 as any Error })
    }

    func wait() async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<[UInt8], RequestError>? in
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
