import GeoChatDomain
import GeoChatKafka

/// The gateway's typed view of the services it sends commands to. Every
/// failure is already the protocol error the client should see.
struct ServiceClients: Sendable {
    let requests: RequestClient
    let timeout: Duration

    func session(_ command: SessionCommand, key: String, idempotencyKey: String) async throws(ProtocolError) -> SessionInfo {
        guard case .session(let info) = try await call(command, Topics.sessionCommands, key, idempotencyKey) else {
            throw .unavailable
        }
        return info
    }

    func rooms(_ command: RoomsCommand, key: String, idempotencyKey: String = newKey()) async throws(ProtocolError) -> ReplyBody {
        try await call(command, Topics.roomsCommands, key, idempotencyKey)
    }

    func messaging(_ command: MessagingCommand, room: RoomID, idempotencyKey: String = newKey()) async throws(ProtocolError) -> ReplyBody {
        try await call(command, Topics.messagingCommands, String(room), idempotencyKey)
    }

    func history(room: RoomID, after: MessageID?, limit: Int) async throws(ProtocolError) -> MessageHistory {
        guard case .history(let history) = try await messaging(.history(room: room, after: after, limit: limit), room: room)
        else { throw .unavailable }
        return history
    }

    func call<Command: Codable & Sendable>(
        _ command: Command, _ topic: String, _ key: String, _ idempotencyKey: String
    ) async throws(ProtocolError) -> ReplyBody {
        do {
            return try await requests.request(
                command, topic: topic, key: key, idempotencyKey: idempotencyKey, timeout: timeout)
        } catch {
            switch error {
            case .refused(let refusal): throw refusal
            case .unexpectedReply: throw .unavailable
            // The command may have reached its owner and been carried out.
            case .timedOut, .notSent: throw .outcomeUnknown
            }
        }
    }

    /// A fresh idempotency key: 128 random bits.
    static func newKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next(), radix: 36) + "-" + String(generator.next(), radix: 36)
    }
}
