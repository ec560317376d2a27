import Synchronization

/// Runs `operation`, giving up after `timeout`. Unlike a task group this returns
/// on time even if the operation ignores cancellation (a pool waiting for a
/// PostgreSQL that is down): the late work is cancelled and left to finish alone.
public func bounded<T: Sendable>(
    by timeout: Duration, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = OneShot<T>()
    let work = Task { outcome.finish(await Result { try await operation() }) }
    let timer = Task {
        try await Task.sleep(for: timeout)
        outcome.finish(.failure(DeadlineExceeded()))
        work.cancel()
    }
    defer { timer.cancel() }
    return try await outcome.value()
}

/// Runs `operation`, cancelling it after `timeout`, and returns only once it has
/// stopped. For work that must not outlive its caller, such as reading a
/// request's body: a reader left running after the handler answered would
/// iterate the body alongside the server's own drain of it.
public func withDeadline<T: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw DeadlineExceeded() }
        return value
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
