import Crypto
import Foundation

/// Commands only operators' tools may send: an admin's room removal (the
/// admin gateway) and expiry's removals. They travel on topics that every
/// internet-facing gateway must write (`create`, `join`, `say` share them),
/// and Kafka's ACLs are per topic, so the topic cannot tell who sent one.
/// The sender seals the command's content with a key the public gateways do
/// not hold (`GEOCHAT_OPERATOR_KEY`: the admin gateway, expiry, rooms and
/// messaging), and the owner refuses a command without a valid seal: a
/// compromised public gateway cannot remove rooms (docs/security.md,
/// "Secrets and the bus").
public protocol OperatorCommand: WireCommand {
    /// HMAC-SHA256 of `sealedFields` under the operator key, base64; nil: not sealed.
    var seal: String? { get set }
    /// What the seal covers: every field that decides what the command does.
    var sealedFields: [String] { get }
}
