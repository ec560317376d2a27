import GeoChatBus
import GeoChatDomain

/// The messaging service's state: each room's log of messages with dense ids
/// 1, 2, 3, …. `PostgresMessageStore` keeps it.
protocol MessageStore: Sendable {
    func state(of room: RoomID) async throws -> RoomLogState
    /// Starts the log of a room the rooms service confirmed (or announced); idempotent.
    func open(_ room: RoomID) async throws
    /// The message stored earlier under this idempotency key, if any.
    func stored(key: String) async throws -> (ChatMessage, author: SessionID?)?
    /// Appends with the room's next id, committed no later than `commitBy`
    /// (else nothing is stored and it throws). Nil when the log is removed or not
    /// open here; throws `DuplicateIdempotencyKey` when the key was used before.
    func append(room: RoomID, nick: String, text: String, author: SessionID?, key: String, commitBy: Deadline)
        async throws -> ChatMessage?
    /// Messages with id > `after` oldest first, or the latest `limit`, up to `head`, without holes.
    func history(room: RoomID, head: MessageID, after: MessageID?, limit: Int) async throws -> [ChatMessage]
    /// Deletes a room's messages and tombstones its log.
    func remove(_ room: RoomID) async throws
    /// The same for many rooms; answers how many messages went.
    func remove(rooms: [RoomID]) async throws -> Int
    func messageCounts(_ rooms: [RoomID]) async throws -> [RoomMessageCount]
}

enum RoomLogState: Equatable {
    case unknown
    case open(head: MessageID)
    case removed
}

/// A say whose idempotency key is stored already: a retry of an earlier say.
struct DuplicateIdempotencyKey: Error {}
