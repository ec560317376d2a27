import CRdKafka
import Foundation
import Synchronization

/// How a send ended, in Swift terms.
enum DeliveryOutcome: Sendable, Equatable {
    case delivered
    /// Refused or timed out; `needsFreshProducer`: this handle cannot recover by itself.
    case failed(String, needsFreshProducer: Bool)
}
