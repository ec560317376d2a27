import GeoChatDomain
import GeoChatKafka
import Logging

/// The admin API's view of the services: the session service (accounts,
/// tokens, bans, settings, audit), rooms and messaging (their part of the room
/// list, removal), expiry (runs and reports). Failures come out as `AdminFailure`.
struct AdminBackend: Sendable {
    let services: ServiceClients
    let gateway: String
    let logger: Logger

    func admin(_ command: AdminCommand, key: String) async throws(AdminFailure) -> AdminReply {
        guard case .admin(let reply) = try await call(command, Topics.adminCommands, key) else {
            throw AdminFailure(.unavailable)
        }
        return reply
    }

    func rooms(_ command: RoomsAdminCommand, key: String) async throws(AdminFailure) -> ReplyBody {
        try await call(RoomsCommand.admin(command), Topics.roomsCommands, key)
    }

    func members(_ room: RoomID) async throws(AdminFailure) -> [Member] {
        guard case .members(let members) = try await call(RoomsCommand.members(room: room), Topics.roomsCommands, String(room))
        else { throw AdminFailure(.unavailable) }
        return members
    }

    func messageCounts(_ rooms: [RoomID]) async throws(AdminFailure) -> [RoomID: Int] {
        guard !rooms.isEmpty else { return [:] }
        guard case .admin(.messageCounts(let counts)) = try await call(
            MessagingCommand.messageCounts(rooms: rooms), Topics.messagingCommands, ServiceClients.newKey())
        else { throw AdminFailure(.unavailable) }
        return Dictionary(counts.map { ($0.room, $0.messages) }) { a, _ in a }
    }

    func expiry(_ command: ExpiryCommand) async throws(AdminFailure) -> ReplyBody {
        try await call(command, Topics.expiryCommands, "expiry")
    }

    /// Records an action carried out outside the session service. The action
    /// already happened, so a lost audit row is logged loudly rather than undoing it.
    func audit(_ admin: String, _ action: String, _ target: String, _ outcome: String, _ detail: String = "") async {
        let entry = AuditEntry(actor: admin, action: action, target: target, outcome: outcome, detail: detail, gateway: gateway)
        do {
            _ = try await self.admin(.audit(entry), key: admin)
        } catch {
            logger.error(
                "audit row not written", metadata: ["admin": "\(admin)", "action": "\(action)", "target": "\(target)", "outcome": "\(outcome)"])
        }
    }

    private func call<Command: Codable & Sendable>(_ command: Command, _ topic: String, _ key: String) async throws(AdminFailure) -> ReplyBody {
        do {
            return try await services.call(command, topic, key, ServiceClients.newKey())
        } catch {
            throw AdminFailure(error)
        }
    }
}
