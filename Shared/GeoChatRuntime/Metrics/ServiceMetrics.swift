import Foundation
import GeoChatMetrics
import Metrics
import Prometheus
import Synchronization

/// The process's metrics: swift-metrics backed by one Prometheus registry,
/// exposed as text at `GET /metrics` (see `HealthRoutes`).
public enum ServiceMetrics {
    /// Bootstraps swift-metrics once per process (later calls do nothing), so
    /// tests may build several `ServiceEnvironment`s.
    public static func bootstrap() { _ = bootstrapped }

    private static let registry = PrometheusCollectorRegistry()
    private static let bootstrapped: Void = {
        var factory = PrometheusMetricsFactory(registry: registry)
        // Polls answer in well under a millisecond: start the buckets there.
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2500),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .microseconds(2_500_000), .seconds(5), .seconds(10),
        ]
        MetricsSystem.bootstrap(factory)
    }()

    private static let samplers = Mutex<[@Sendable () -> Void]>([])
    private static let residentMemory = Gauge(label: MetricNames.residentMemory)

    /// Runs `sample` before every scrape: for gauges read off state (read-model
    /// sizes, pool settings) rather than updated on every change.
    public static func onScrape(_ sample: @escaping @Sendable () -> Void) {
        samplers.withLock { $0.append(sample) }
    }

    /// The Prometheus text exposition of everything recorded so far.
    public static func exposition() -> [UInt8] {
        for sample in samplers.withLock({ $0 }) { sample() }
        if let bytes = residentBytes() { residentMemory.record(bytes) }
        return registry.emitToBuffer()
    }

    /// Resident set size from /proc/self/statm (Linux); nil elsewhere.
    static func residentBytes() -> Int? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
