import Synchronization

/// Counts the session lookups `signOfLife` runs beside requests.
package final class BackgroundLookups: Sendable {
    package static let most = 64
    private let running = Atomic<Int>(0)

    package init() {}

    /// True (and counted) when one more may start.
    package func begin() -> Bool {
        if running.add(1, ordering: .relaxed).newValue <= Self.most { return true }
        running.subtract(1, ordering: .relaxed)
        return false
    }

    package func end() { running.subtract(1, ordering: .relaxed) }
}
