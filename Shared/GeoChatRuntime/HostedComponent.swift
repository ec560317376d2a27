import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// One of a service's loops, as a lifecycle `Service`.
struct HostedComponent: Service {
    let name: String
    let body: @Sendable () async throws -> Void

    func run() async throws { try await body() }
}
