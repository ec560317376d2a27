import GeoChatMetrics
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Calls holding a connection right now, published as a gauge.
final class PoolUse: Sendable {
    private let count = Atomic<Int>(0)
    private let gauge = Gauge(label: MetricNames.pgConnectionsInUse)

    func change(by delta: Int) {
        let now = count.add(delta, ordering: .relaxed).newValue
        gauge.record(now)
    }
}
