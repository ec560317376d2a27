import Foundation

/// The memory this process may use: its cgroup's limit (a container's, e.g.
/// a Kubernetes `resources.limits.memory`), else the machine's. Settings that
/// scale with memory derive their defaults from it.
public enum ProcessMemory {
    public static func limitBytes() -> UInt64 {
        let machine = ProcessInfo.processInfo.physicalMemory
        // cgroup v2, then v1; "max" (v2) or a huge number (v1) means no limit.
        for file in ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"] {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8),
                let limit = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines))
            else { continue }
            return min(limit, machine)
        }
        return machine
    }
}
