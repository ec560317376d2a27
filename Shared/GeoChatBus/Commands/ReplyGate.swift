import Foundation
import GeoChatDomain
import GeoChatKafka
import Logging
import Synchronization

/// Records handed to the producer that a reply waits for (`CommandContext.replyAfter`).
public final class ReplyGate: Sendable {
    private let pending = Mutex<[(RecordDelivery, String)]>([])

    public init() {}

    func add(_ delivery: RecordDelivery, failure: String) { pending.withLock { $0.append((delivery, failure)) } }

    var isEmpty: Bool { pending.withLock { $0.isEmpty } }

    /// Waits for every delivery; those that failed are logged.
    func settle(logger: Logger) async {
        for (delivery, failure) in pending.withLock({ $0 }) {
            do { try await delivery.wait() } catch {
                logger.warning("\(failure)", metadata: ["error": "\(error)"])
            }
        }
    }
}
