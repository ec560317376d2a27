import GeoChatBus
import GeoChatDomain
import GeoChatKafka

/// The messaging service's state: each room's log of messages with dense ids
/// 1, 2, 3, …, and the outbox of messages whose event the broker has not yet
/// acknowledged. `PostgresMessageStore` keeps it.
protocol MessageStore: Sendable {
    func state(of room: RoomID) async throws -> RoomLogState
    /// Starts the logs of rooms the rooms service confirmed (or announced), in
    /// one statement; idempotent.
    func open(_ rooms: [RoomID]) async throws
    /// The message stored earlier under this idempotency key, if any.
    func stored(key: String) async throws -> (ChatMessage, author: SessionID?)?
    /// Appends with the room's next id and puts it in the outbox, in one
    /// transaction committed no later than `commitBy` (else nothing is stored
    /// and it throws). A say of the same text under the same nick by the same
    /// author (nil: an anonymous lobby post) into the same room within
    /// `MessageRules.repeatWindow` of an earlier one is a phone's retry: nothing is
    /// stored and the earlier message is the answer (`.repeated`). Nil when the
    /// log is removed or not open here; throws `DuplicateIdempotencyKey` when the
    /// key was used before.
    func append(room: RoomID, nick: String, text: String, author: SessionID?, key: String, commitBy: Deadline)
        async throws -> Appended?
    /// Appends several says in one transaction (group commit), each as `append`
    /// would: one say per room and per idempotency key (the caller keeps that).
    /// Each answer is what `append` answers for that say, or
    /// `DuplicateIdempotencyKey`. Throws when the transaction fails as a whole
    /// (nothing is stored then; the caller falls back to `append`, say by say).
    func append(_ says: [NewMessage]) async throws -> [Result<Appended?, DuplicateIdempotencyKey>]
    /// Messages with id > `after` oldest first, or the latest `limit`, up to `head`, without holes: removed
    /// ones as tombstones, or (`skipRemoved`) left out, `limit` then counting the others.
    func history(room: RoomID, head: MessageID, after: MessageID?, limit: Int, skipRemoved: Bool) async throws
        -> [ChatMessage]
    /// Makes tombstones of the selected messages not removed yet (oldest first, at most `limit`), their
    /// events in the outbox, in one transaction; answers the tombstones. Rooms removed are left alone.
    func remove(_ selection: MessageSelection, limit: Int) async throws -> [ChatMessage]
    /// The committed head of each open log among `rooms` (unknown and removed ones left out).
    func heads(_ rooms: [RoomID]) async throws -> [RoomHead]
    /// For each open log among `rooms`: its lowest id not removed, or the head + 1 when every message
    /// is removed. No message below it is shown, now or ever (ids grow, removals are final), which
    /// lets a gateway answer a cleared room from memory (`MessageStored.shownFrom`).
    func shownFrom(_ rooms: [RoomID]) async throws -> [RoomID: MessageID]
    /// Deletes a room's messages and tombstones its log.
    func remove(_ room: RoomID) async throws
    /// The same for many rooms; answers how many messages went.
    func remove(rooms: [RoomID]) async throws -> Int
    func messageCounts(_ rooms: [RoomID]) async throws -> [RoomMessageCount]

    // MARK: The outbox

    /// The broker acknowledged these messages' events: their outbox rows go.
    func announced(_ messages: [MessageRef]) async throws
    /// One relay pass, run by at most one instance at a time cluster-wide (others
    /// get `.notLeader`): the outbox's messages stored longer than `grace` ago,
    /// at most `limit`, by room and id, go to `publish`, which answers those the
    /// broker acknowledged; their rows are then removed, with those of messages
    /// deleted meanwhile (a removed room).
    func relayUnannounced(
        olderThan grace: Duration, limit: Int, publish: @Sendable ([MessageStored]) async -> [MessageRef]
    ) async throws -> OutboxPass
}

extension MessageStore {
    /// One say after the other, each in its own transaction: for stores where
    /// a commit costs nothing (the in-memory one).
    func append(_ says: [NewMessage]) async throws -> [Result<Appended?, DuplicateIdempotencyKey>] {
        var answers: [Result<Appended?, DuplicateIdempotencyKey>] = []
        for say in says {
            do {
                answers.append(
                    .success(
                        try await append(
                            room: say.room, nick: say.nick, text: say.text, author: say.author, key: say.key,
                            commitBy: say.commitBy)))
            } catch let error as DuplicateIdempotencyKey {
                answers.append(.failure(error))
            }
        }
        return answers
    }
}

extension MessageStored: OutboxEntry {
    public var ref: MessageRef { MessageRef(message) }
    public var lane: String { partitionKey }
    public func enqueue(on events: any EventPublisher) -> RecordDelivery {
        do { return events.enqueue(try EncodedEvent(self, answers: answers)) } catch { return .completed(error) }
    }
}

enum RoomLogState: Equatable {
    case unknown
    /// `removed`: how many of its messages operators removed (`RoomHead.removed`).
    case open(head: MessageID, removed: Int64 = 0)
    case removed
}

/// A say to append: what `append(room:nick:text:author:key:commitBy:)` takes.
struct NewMessage: Sendable {
    let room: RoomID
    let nick: String
    let text: String
    let author: SessionID?
    let key: String
    let commitBy: Deadline
}

/// What `append` did.
enum Appended: Equatable {
    /// Stored under the room's next id; its event is in the outbox.
    case stored(ChatMessage)
    /// A repeat within `MessageRules.repeatWindow`: the earlier message, stored once.
    case repeated(ChatMessage, author: SessionID?)

    var message: ChatMessage {
        switch self {
        case .stored(let message), .repeated(let message, _): message
        }
    }
}

/// A say whose idempotency key is stored already: a retry of an earlier say.
struct DuplicateIdempotencyKey: Error {}

enum MessageRules {
    /// A phone repeats a `say` it got no answer for (a `503`, a cut connection)
    /// within 10 s of that answer: up to three times, a second apart. The answer
    /// comes at most the request deadline (3 s) after the first was stored, and
    /// a repeat may wait up to as long before its own turn: measured from the
    /// first message's commit, 15 s covers them all.
    static let repeatWindow: Duration = .seconds(15)
    static var repeatWindowMs: Int64 { repeatWindow.components.seconds * 1000 }
}

/// A message by its key, as the outbox names it (public: the key of a public
/// conformance, `MessageStored: OutboxEntry`).
public struct MessageRef: Hashable, Sendable {
    let room: RoomID
    let id: MessageID

    init(room: RoomID, id: MessageID) {
        self.room = room
        self.id = id
    }

    init(_ message: ChatMessage) { self.init(room: message.room, id: message.id) }
}

/// The messaging store as an outbox: its entries are stored messages, in
/// lanes by room.
struct MessageOutbox: Outbox {
    let store: any MessageStore

    func announced(_ entries: [MessageRef]) async throws { try await store.announced(entries) }

    func relayUnannounced(
        olderThan grace: Duration, limit: Int, publish: @Sendable ([MessageStored]) async -> [MessageRef]
    ) async throws -> OutboxPass {
        try await store.relayUnannounced(olderThan: grace, limit: limit, publish: publish)
    }
}

extension MessageStore {
    /// Starts one room's log (`open(_:)` with one room).
    func open(_ room: RoomID) async throws { try await open([room]) }
}
