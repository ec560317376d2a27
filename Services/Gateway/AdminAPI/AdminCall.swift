import GatewayCore
import GeoChatDomain
import Hummingbird
import Logging

/// One authenticated admin request.
struct AdminCall: Sendable {
    let request: Request
    let context: GatewayRequestContext
    let admin: AdminIdentity
    let tokenHash: String

    var name: String { admin.name }

    func parameter(_ name: String) -> String? { context.parameters.get(name) }
}
