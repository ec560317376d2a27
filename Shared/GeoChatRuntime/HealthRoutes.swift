import Foundation
import GeoChatKafka
import Hummingbird

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
