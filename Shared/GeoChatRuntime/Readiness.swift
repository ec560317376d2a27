import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

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
