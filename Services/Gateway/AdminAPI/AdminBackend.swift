import GatewayCore
import GeoChatBus
import GeoChatDomain
import Logging

/// The admin API's view of the services: the session service (accounts,
/// tokens, bans, settings, audit), rooms and messaging (their part of the room
/// list, removal), expiry (runs and reports). Failures come out as `AdminFailure`.
struct AdminBackend: Sendable {
    let services: ServiceClients
    let gateway: String
    let logger: Logger

    func send<Command: WireCommand>(_ command: Command) async throws(AdminFailure) -> Command.Reply {
        do { return try await services.send(command) } catch { throw AdminFailure(error) }
    }

    func messageCounts(_ rooms: [RoomID]) async throws(AdminFailure) -> [RoomID: Int] {
        guard !rooms.isEmpty else { return [:] }
        let counts = try await send(CountMessages(rooms: rooms))
        return Dictionary(counts.map { ($0.room, $0.messages) }) { a, _ in a }
    }

    /// Records an action carried out outside the session service. The action
    /// already happened, so a lost audit row is logged loudly rather than undoing it.
    func audit(
        _ admin: String, _ action: String, _ target: String, _ outcome: String, _ detail: String = "",
        source: String? = nil
    ) async {
        let entry = AuditEntry(
            actor: admin, action: action, target: target, outcome: outcome, detail: detail, gateway: gateway,
            source: source)
        do {
            _ = try await send(RecordAudit(entry))
        } catch {
            logger.error(
                "audit row not written",
                metadata: ["admin": "\(admin)", "action": "\(action)", "target": "\(target)", "outcome": "\(outcome)"])
        }
    }
}
