import GatewayCore
import GeoChatDomain

/// What the admin API seals: admin passwords for the session service
/// (`LoginSeal`), and the commands only operators may send (`OperatorSeal`).
struct AdminKeys: Sendable {
    let login: LoginSeal
    let operatorCommands: OperatorSeal
}
