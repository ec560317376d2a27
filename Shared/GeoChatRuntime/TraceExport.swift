import Logging
import OTel
import ServiceLifecycle
import Synchronization
import Tracing

/// Where an instance's spans go (`tracing`, `GEOCHAT_TRACING`): nowhere, the
/// default — the tracer stays swift-distributed-tracing's no-op one, no span
/// is recorded and no record header written — or, with `otlp`, to an
/// OpenTelemetry collector over OTLP/HTTP, as the standard `OTEL_*` variables
/// say (endpoint, protocol, sampler, batching; docs/operations.md, "Traces").
/// Only traces: metrics stay Prometheus and logs logfmt.
public enum TraceExport: String, Sendable, CaseIterable {
    case off
    case otlp

    public init(configuration: Configuration) throws {
        let name = configuration.string("tracing", default: TraceExport.off.rawValue)
        guard let export = TraceExport(rawValue: name) else {
            throw ConfigurationError(
                key: "tracing", value: name, expected: TraceExport.allCases.map(\.rawValue).joined(separator: " or "))
        }
        self = export
    }

    /// A process bootstraps its tracer once (a second bootstrap would trap).
    private static let bootstrapped = Atomic<Bool>(false)

    /// Whether this process exports spans. When it does not, callers leave
    /// out what exists only to make spans (the gateway's request middleware),
    /// so tracing off costs a request nothing.
    public static var isExporting: Bool { bootstrapped.load(ordering: .acquiring) }

    /// Installs the exporting tracer, named `geochat-<service>` (`OTEL_SERVICE_NAME`
    /// wins), and answers its exporter as a lifecycle service, which sends the
    /// spans in batches and flushes what is left at shutdown. Nil when off.
    public func start(service: String, instance: String, logger: Logger) throws -> (any Service)? {
        guard self == .otlp, !Self.bootstrapped.exchange(true, ordering: .acquiringAndReleasing) else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "geochat-\(service)"
        configuration.resourceAttributes["service.instance.id"] = instance
        configuration.diagnosticLogger = .custom(logger)
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(backend.factory)
        logger.info("tracing on: spans exported over OTLP")
        return backend.service
    }
}
