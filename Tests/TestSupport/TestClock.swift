import Synchronization

/// A wall clock (milliseconds since 1970) that tests move by hand, for stores
/// and handlers that take a `now`.
public final class TestClock: Sendable {
    private let now: Mutex<Int64>

    public init(nowMs: Int64) { now = Mutex(nowMs) }

    public var read: @Sendable () -> Int64 { { [self] in now.withLock { $0 } } }

    public func advance(by milliseconds: Int64) { now.withLock { $0 += milliseconds } }
}
