import Synchronization

final class OneShot<T: Sendable>: Sendable {
    private enum State {
        case waiting(CheckedContinuation<T, any Error>?)
        case done(Result<T, any Error>)
    }
    private let state = Mutex<State>(.waiting(nil))

    func finish(_ result: Result<T, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<T, any Error>?? in
            guard case .waiting(let c) = state else { return nil }
            state = .done(result)
            return .some(c)
        }
        if case .some(.some(let c)) = continuation { c.resume(with: result) }
    }

    func value() async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<T, any Error>? in
                switch state {
                case .waiting:
                    state = .waiting(continuation)
                    return nil
                case .done(let r): return r
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
