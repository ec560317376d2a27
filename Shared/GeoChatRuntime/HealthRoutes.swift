import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// `/health` (the process answers), `/ready` (its dependencies answer and its
/// read models are loaded), `/status` (JSON) and `/metrics` (Prometheus text), on every service.
public struct HealthRoutes: Sendable {
    public let isReady: @Sendable () -> Bool
    public let status: @Sendable () -> ServiceStatus

    public init(isReady: @escaping @Sendable () -> Bool, status: @escaping @Sendable () -> ServiceStatus) {
        self.isReady = isReady
        self.status = status
    }

    /// All four, on an internal listener.
    public func register<Context: RequestContext>(on router: Router<Context>) {
        registerProbes(on: router)
        router.get("/status") { _, _ in
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            let body = (try? encoder.encode(status())) ?? Data("{}".utf8)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: Self.metricsContentType],
                body: .init(byteBuffer: ByteBuffer(bytes: ServiceMetrics.exposition())))
        }
    }

    /// `/health` and `/ready` only: what a load balancer in front of a public
    /// listener probes. `/status` and `/metrics` tell an attacker too much.
    public func registerProbes<Context: RequestContext>(on router: Router<Context>) {
        router.get("/health") { _, _ in Self.text("ok\n", .ok) }
        router.get("/ready") { _, _ in
            isReady() ? Self.text("ready\n", .ok) : Self.text("not ready\n", .serviceUnavailable)
        }
    }

    static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

    static func text(_ body: String, _ status: HTTPResponse.Status) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

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

/// Started, and every condition holds.
final class Readiness: Sendable {
    private let started = Atomic<Bool>(false)
    private let conditions = Mutex<[@Sendable () -> Bool]>([])

    func add(_ condition: @escaping @Sendable () -> Bool) { conditions.withLock { $0.append(condition) } }

    func markStarted() { started.store(true, ordering: .releasing) }

    var isReady: Bool {
        started.load(ordering: .acquiring) && conditions.withLock { $0 }.allSatisfy { $0() }
    }
}
