import GeoChatKafka
import Synchronization

/// The record that carries a command's reply instead of a reply record
/// (`CommandContext.answeredBy`): a say's message event, which its requester
/// reads anyway. The processor sends the reply record only if the broker did
/// not take that one.
public final class ReplyCarrier: Sendable {
    private let carrier = Mutex<RecordDelivery?>(nil)

    public init() {}

    func carry(by delivery: RecordDelivery) { carrier.withLock { $0 = delivery } }

    /// The delivery of the record that carries the reply, if one does.
    var delivery: RecordDelivery? { carrier.withLock { $0 } }
}
