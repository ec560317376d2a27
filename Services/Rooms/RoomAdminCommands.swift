import GeoChatDomain

/// The rooms service's part of administration: list and search rooms, remove one now.
extension RoomCommands {
    func handleAdmin(_ command: RoomsAdminCommand) async throws -> ReplyBody {
        switch command {
        case .list(let search, let limit):
            let text = search ?? ""
            guard text.count <= 100 else { throw ProtocolError.bad("q", "is longer than 100 characters") }
            return .admin(.rooms(try await store.adminList(search: text, limit: min(max(limit, 1), 1000))))

        case .remove(let room, let by):
            switch try await store.removeNow(room, reason: "admin") {
            case .lobby:
                throw ProtocolError(.badParam, "the lobby room cannot be removed")
            case .noSuchRoom:
                throw ProtocolError.noSuchChat
            case .removed:
                // Messaging deletes the messages and gateways answer 404 on this event.
                try await publish(.removed(room: room, reason: "admin"), room)
                logger.info("room removed", metadata: ["room": "\(room)", "reason": "admin", "admin": "\(by)"])
                return .removed(true)
            }
        }
    }
}
