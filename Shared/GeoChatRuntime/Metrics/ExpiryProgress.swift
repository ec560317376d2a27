import GeoChatMetrics
import Metrics

/// Where the expiry service reports its job's progress, for operators.
/// Call `started` when a run begins, `progress` as rooms are examined (cheap:
/// gauges only), and `finished` with the run's status (`finished`, `failed`, …).
public enum ExpiryProgress {
    private static let running = Gauge(label: MetricNames.expiryJobRunning)
    private static let examined = Gauge(label: MetricNames.expiryRoomsExamined)
    private static let removed = Gauge(label: MetricNames.expiryRoomsRemoved)
    private static let failed = Gauge(label: MetricNames.expiryRoomsFailed)
    private static let started = Counter(label: MetricNames.expiryJobsStarted)
    private static let finishedJobs = LabeledFamily(counter: MetricNames.expiryJobsFinished, label: "status")

    public static func started(job: Int64) {
        started.increment()
        running.record(1)
        progress(examined: 0, removed: 0, failed: 0)
    }

    /// The current (or last) job's counts so far.
    public static func progress(examined: Int, removed: Int, failed: Int) {
        self.examined.record(examined)
        self.removed.record(removed)
        self.failed.record(failed)
    }

    public static func finished(job: Int64, status: String, examined: Int, removed: Int, failed: Int) {
        progress(examined: examined, removed: removed, failed: failed)
        running.record(0)
        finishedJobs[status].increment()
    }
}
