import Metrics
import Synchronization

/// The metrics of one family, one per label value, made once and kept.
///
/// Creating a swift-metrics object goes through the factory (a lock and a lookup by
/// name and labels in the registry); the hot paths (every poll, every record) instead
/// look their metric up here by one short label value. Label values must come from a
/// bounded set: command names, topic names, outcomes — never ids.
///
/// Inlinable: specialized where it is used, a lookup makes no generic metadata at
/// run time (unspecialized, the lock's and the dictionary's types were looked up
/// in the runtime's metadata cache on every call: a profile of polls showed them).
public final class LabeledFamily<Metric: AnyObject & Sendable>: Sendable {
    @usableFromInline let make: @Sendable (String) -> Metric
    @usableFromInline let members = Mutex<[String: Metric]>([:])

    public init(_ make: @escaping @Sendable (String) -> Metric) { self.make = make }

    @inlinable
    public subscript(_ value: String) -> Metric {
        members.withLock { members in
            if let metric = members[value] { return metric }
            let metric = make(value)
            members[value] = metric
            return metric
        }
    }
}

extension LabeledFamily where Metric == Counter {
    public convenience init(counter name: String, label: String) {
        self.init { Counter(label: name, dimensions: [(label, $0)]) }
    }
}

extension LabeledFamily where Metric == Metrics.Timer {
    public convenience init(timer name: String, label: String) {
        self.init { Metrics.Timer(label: name, dimensions: [(label, $0)]) }
    }
}

extension LabeledFamily where Metric == Gauge {
    public convenience init(gauge name: String, label: String) {
        self.init { Gauge(label: name, dimensions: [(label, $0)]) }
    }
}

extension Metrics.Timer {
    /// Records the time since `start` (taken with `ContinuousClock.now`).
    public func record(since start: ContinuousClock.Instant) {
        record(duration: ContinuousClock.now - start)
    }
}
