/// A monotonic clock in nanoseconds since the process began (not wall time:
/// buckets must not jump when the system clock is set).
package enum MonotonicClock {
    package static let origin = ContinuousClock.now

    package static func ns() -> UInt64 {
        let (seconds, attoseconds) = (ContinuousClock.now - origin).components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000
    }
}
