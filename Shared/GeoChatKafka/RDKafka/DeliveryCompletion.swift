import CRdKafka
import Foundation
import Synchronization

/// Carries a delivery result from librdkafka's poll thread back into Swift.
final class DeliveryCompletion: Sendable {
    let body: @Sendable (rd_kafka_resp_err_t) -> Void
    init(_ body: @escaping @Sendable (rd_kafka_resp_err_t) -> Void) { self.body = body }
}
