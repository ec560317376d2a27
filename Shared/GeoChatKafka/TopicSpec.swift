import Logging

/// A topic as this code creates it: its partitions and what it keeps.
public struct TopicSpec: Sendable, Equatable {
    public enum Retention: Sendable, Equatable {
        /// The latest record of each key, for ever (`cleanup.policy=compact`).
        case compacted
        /// Every record for this long (`retention.ms`).
        case time(milliseconds: Int64)
    }

    public var name: String
    /// Nil: the settings' partition count.
    public var partitions: Int?
    public var retention: Retention

    public init(name: String, partitions: Int? = nil, retention: Retention) {
        self.name = name
        self.partitions = partitions
        self.retention = retention
    }

    /// The topic-level configuration it is created with.
    func config(minInsyncReplicas: Int?) -> [String: String] {
        var config: [String: String]
        switch retention {
        case .compacted: config = ["cleanup.policy": "compact"]
        case .time(let ms): config = ["cleanup.policy": "delete", "retention.ms": String(ms)]
        }
        if let minInsyncReplicas { config["min.insync.replicas"] = String(minInsyncReplicas) }
        return config
    }
}
