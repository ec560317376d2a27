import Foundation
import GeoChatKafka
import Hummingbird

/// What `/status` tells an operator (and the tests) about one instance.
public struct ServiceStatus: Codable, Sendable {
    public var service: String
    public var instance: String
    public var ready: Bool
    /// Partitions of each consumed topic this instance holds right now.
    public var assignedPartitions: [String: [Int32]]
    public var details: [String: String]

    public init(
        service: String, instance: String, ready: Bool, assignments: [TopicAssignment], details: [String: String] = [:]
    ) {
        self.service = service
        self.instance = instance
        self.ready = ready
        self.assignedPartitions = Dictionary(assignments.map { ($0.topic, $0.partitions) }) { $0 + $1 }
        self.details = details
    }
}
