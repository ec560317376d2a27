import Foundation
import GeoChatDomain
import Synchronization

#if os(Linux)
    import Glibc
#endif

/// Password checks (bcrypt, tens to hundreds of milliseconds of a core each)
/// at most `concurrent` at a time per session-service instance, and at most
/// `waiting` queued behind them; a check beyond that is refused at once
/// (`rate_limited`). A login flood then costs this instance `concurrent`
/// cores at most, and `start`, `nick` and the other commands it answers keep
/// their latency (issue 16; docs/security.md, "Logins").
final class PasswordChecks: Sendable {
    struct Busy: Error {}

    private struct State {
        var running = 0
        var queue: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    let concurrent: Int
    let waiting: Int

    init(concurrent: Int = 1, waiting: Int = 8) {
        self.concurrent = max(1, concurrent)
        self.waiting = max(0, waiting)
    }

    /// `Bcrypt.verify` when a slot is free; throws `Busy` when the queue is full.
    func verify(_ password: String, hash: String, with check: @escaping @Sendable (String, String) -> Bool) async throws
        -> Bool
    {
        try await acquire()
        defer { release() }
        return await withCheckedContinuation { continuation in
            // A thread of its own at the lowest CPU priority: under a flood the
            // machine's other work (this service's `start`s, the gateways, the
            // broker) goes first, and the checks take what is left.
            Thread.detachNewThread {
                Self.lowerThisThreadsPriority()
                continuation.resume(returning: check(password, hash))
            }
        }
    }

    /// Nice 19 for the calling thread: on Linux the nice value is per thread,
    /// and `who` 0 is the calling one. Elsewhere a no-op.
    private static func lowerThisThreadsPriority() {
        #if os(Linux)
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        #endif
    }

    private func acquire() async throws {
        enum Admission { case now, queued, refused }
        let admission = state.withLock { state -> Admission in
            if state.running < concurrent {
                state.running += 1
                return .now
            }
            return state.queue.count < waiting ? .queued : .refused
        }
        switch admission {
        case .now: return
        case .refused: throw Busy()
        case .queued:
            await withCheckedContinuation { continuation in
                let admitted = state.withLock { state -> Bool in
                    // A slot may have freed meanwhile.
                    if state.running < concurrent {
                        state.running += 1
                        return true
                    }
                    state.queue.append(continuation)
                    return false
                }
                if admitted { continuation.resume() }
            }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.queue.isEmpty {
                state.running -= 1
                return nil
            }
            return state.queue.removeFirst()  // the slot passes to it
        }
        next?.resume()
    }

    var inUse: Int { state.withLock { $0.running } }
}
