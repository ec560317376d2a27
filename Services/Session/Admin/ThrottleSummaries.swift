import Synchronization

/// Throttled attempts are many and alike: an audit row for each would push the
/// real rows out of view (`GET /admin/audit` shows the latest) and cost a write
/// per attempt. One row per key per `windowMs`, carrying how many were held
/// back since the previous one. Per instance, bounded.
final class ThrottleSummaries: Sendable {
    private let entries = Mutex<[String: (rowAtMs: Int64, suppressed: Int)]>([:])
    let windowMs: Int64
    static let maxKeys = 10_000

    init(windowMs: Int64 = 60_000) { self.windowMs = windowMs }

    /// The attempts held back since the last row when one is due now; nil: count this one, write nothing.
    func due(_ key: String, nowMs: Int64) -> Int? {
        entries.withLock { entries in
            if let entry = entries[key], nowMs - entry.rowAtMs < windowMs {
                entries[key]!.suppressed += 1
                return nil
            }
            if entries.count >= Self.maxKeys { entries = entries.filter { nowMs - $0.value.rowAtMs < windowMs } }
            let suppressed = entries[key]?.suppressed ?? 0
            entries[key] = (nowMs, 0)
            return suppressed
        }
    }
}
