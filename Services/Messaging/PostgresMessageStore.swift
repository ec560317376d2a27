import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatPostgres
import PostgresNIO

/// The messaging service's tables (schema `messaging`): each room's log of
/// messages with dense ids 1, 2, 3, … and every query on them.
struct PostgresMessageStore: MessageStore, PostgresStore {
    let database: Database

    static let schema: StaticString = "messaging"
    static let migrations = [
        Migration(
            1, "room logs and messages",
            [
                """
                CREATE TABLE messaging.room_logs (
                    room_id bigint PRIMARY KEY,
                    last_id bigint NOT NULL DEFAULT 0,
                    removed_at timestamptz)
                """,
                """
                CREATE TABLE messaging.messages (
                    room_id bigint NOT NULL,
                    id bigint NOT NULL,
                    nick text NOT NULL,
                    text text NOT NULL,
                    added_at timestamptz NOT NULL DEFAULT now(),
                    author_session text,
                    idempotency_key text NOT NULL,
                    PRIMARY KEY (room_id, id))
                """,
                "CREATE UNIQUE INDEX messages_idempotency ON messaging.messages (idempotency_key)",
            ]),
        Migration(
            2, "outbox and repeated says",
            [
                // A message's event until the broker acknowledged it: written in
                // the message's own transaction, so no committed message goes
                // unannounced (docs/architecture.md, "The outbox").
                """
                CREATE TABLE messaging.outbox (
                    room_id bigint NOT NULL,
                    id bigint NOT NULL,
                    stored_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (room_id, id))
                """,
                // The repeat rule's lookup: one author's latest messages in a room.
                "CREATE INDEX messages_by_author ON messaging.messages (room_id, author_session, added_at)",
            ]),
    ]

    /// Relay passes take this transaction-level advisory lock: one pass at a
    /// time cluster-wide, so a room's events leave in id order.
    static let relayLock = Database.advisoryKey("geochat.messaging.outbox-relay")

    func state(of room: RoomID) async throws -> RoomLogState {
        let rows = try await client.query(
            "SELECT last_id, removed_at IS NOT NULL FROM messaging.room_logs WHERE room_id = \(room)", logger: logger)
        for try await (head, removed) in rows.decode((Int64, Bool).self) {
            return removed ? .removed : .open(head: head)
        }
        return .unknown
    }

    /// Starts the log of a room the rooms service confirmed (or announced).
    func open(_ room: RoomID) async throws {
        try await client.query(
            "INSERT INTO messaging.room_logs (room_id) VALUES (\(room)) ON CONFLICT DO NOTHING", logger: logger)
    }

    /// The message stored earlier under this idempotency key, if any.
    func stored(key: String) async throws -> (ChatMessage, author: SessionID?)? {
        let rows = try await client.query(
            """
            SELECT room_id, id, nick, text, added_at, author_session FROM messaging.messages
            WHERE idempotency_key = \(key)
            """, logger: logger)
        for try await (room, id, nick, text, added, author) in rows.decode((Int64, Int64, String, String, Date, String?).self) {
            return (ChatMessage(room: room, id: id, nick: nick, text: text, addedAt: WallClock.milliseconds(added)), author.flatMap(SessionID.init))
        }
        return nil
    }

    /// Appends a message with the room's next id, or finds it repeated. The
    /// room's log row is locked first, in a statement of its own: it orders the
    /// room's writers (ids are dense and commit in id order), and the next
    /// statement's snapshot, taken once the lock is held, sees every message
    /// committed before, so two instances running a phone's repeat at once
    /// (a rebalance) store it once. One more statement looks for the repeat,
    /// takes the id, inserts the message and its outbox row. A repeated
    /// idempotency key (a unique violation, see `isDuplicateKey`) undoes the
    /// whole transaction, id included. Nil when the room's log is removed or not
    /// open here yet (`state(of:)` tells which).
    /// Past `commitBy` it rolls back instead of committing: the
    /// requester stops waiting at its deadline and must not be told "unavailable"
    /// about a message that is then stored after all.
    func append(
        room: RoomID, nick: String, text: String, author: SessionID?, key: String, commitBy: Deadline
    ) async throws -> Appended? {
        do {
            return try await insert(room: room, nick: nick, text: text, author: author, key: key, commitBy: commitBy)
        } catch where Self.isDuplicateKey(error) {
            throw DuplicateIdempotencyKey()
        }
    }

    private func insert(
        room: RoomID, nick: String, text: String, author: SessionID?, key: String, commitBy: Deadline
    ) async throws -> Appended? {
        try await client.withTransaction(logger: logger) { tx in
            let locked = try await tx.query(
                """
                SELECT last_id FROM messaging.room_logs WHERE room_id = \(room) AND removed_at IS NULL
                FOR NO KEY UPDATE
                """, logger: logger)
            var open = false
            for try await _ in locked.decode(Int64.self) { open = true }
            guard open else { return nil }
            let window = Double(MessageRules.repeatWindowMs) / 1000
            // Two spellings, so the author test is an index condition either way.
            let rows: PostgresRowSequence
            if let author = author?.value {
                rows = try await tx.query(
                    """
                    WITH earlier AS (
                        SELECT id, added_at FROM messaging.messages
                        WHERE room_id = \(room) AND author_session = \(author)
                          AND added_at > now() - make_interval(secs => \(window)) AND nick = \(nick) AND text = \(text)
                        ORDER BY id DESC LIMIT 1),
                    next AS (
                        UPDATE messaging.room_logs SET last_id = last_id + 1
                        WHERE room_id = \(room) AND NOT EXISTS (SELECT 1 FROM earlier)
                        RETURNING last_id),
                    inserted AS (
                        INSERT INTO messaging.messages (room_id, id, nick, text, author_session, idempotency_key)
                        SELECT \(room), last_id, \(nick), \(text), \(author), \(key) FROM next
                        RETURNING id, added_at),
                    outbox AS (INSERT INTO messaging.outbox (room_id, id) SELECT \(room), id FROM inserted)
                    SELECT id, added_at, false FROM inserted UNION ALL SELECT id, added_at, true FROM earlier
                    """, logger: logger)
            } else {
                rows = try await tx.query(
                    """
                    WITH earlier AS (
                        SELECT id, added_at FROM messaging.messages
                        WHERE room_id = \(room) AND author_session IS NULL
                          AND added_at > now() - make_interval(secs => \(window)) AND nick = \(nick) AND text = \(text)
                        ORDER BY id DESC LIMIT 1),
                    next AS (
                        UPDATE messaging.room_logs SET last_id = last_id + 1
                        WHERE room_id = \(room) AND NOT EXISTS (SELECT 1 FROM earlier)
                        RETURNING last_id),
                    inserted AS (
                        INSERT INTO messaging.messages (room_id, id, nick, text, author_session, idempotency_key)
                        SELECT \(room), last_id, \(nick), \(text), NULL, \(key) FROM next
                        RETURNING id, added_at),
                    outbox AS (INSERT INTO messaging.outbox (room_id, id) SELECT \(room), id FROM inserted)
                    SELECT id, added_at, false FROM inserted UNION ALL SELECT id, added_at, true FROM earlier
                    """, logger: logger)
            }
            var appended: Appended?
            for try await (id, added, repeated) in rows.decode((Int64, Date, Bool).self) {
                let message = ChatMessage(room: room, id: id, nick: nick, text: text, addedAt: WallClock.milliseconds(added))
                appended = repeated ? .repeated(message, author: author) : .stored(message)
            }
            if case .stored? = appended, commitBy.hasPassed() { throw ProtocolError.unavailable }  // rolls back
            return appended
        }
    }

    func heads(_ rooms: [RoomID]) async throws -> [RoomHead] {
        guard !rooms.isEmpty else { return [] }
        let rows = try await client.query(
            """
            SELECT room_id, last_id FROM messaging.room_logs WHERE room_id = ANY(\(rooms)) AND removed_at IS NULL
            """, logger: logger)
        var heads: [RoomHead] = []
        for try await (room, head) in rows.decode((Int64, Int64).self) { heads.append(RoomHead(room: room, head: head)) }
        return heads
    }

    /// Messages with id > `after` oldest first, or the latest `limit`; all with
    /// ids up to the head read first, so the answer has no holes.
    func history(room: RoomID, head: MessageID, after: MessageID?, limit: Int) async throws -> [ChatMessage] {
        let rows: PostgresRowSequence
        if let after {
            rows = try await client.query(
                """
                SELECT id, nick, text, added_at FROM messaging.messages
                WHERE room_id = \(room) AND id > \(after) AND id <= \(head)
                ORDER BY id LIMIT \(limit)
                """, logger: logger)
        } else {
            rows = try await client.query(
                """
                SELECT id, nick, text, added_at FROM (
                    SELECT id, nick, text, added_at FROM messaging.messages
                    WHERE room_id = \(room) AND id <= \(head) ORDER BY id DESC LIMIT \(limit)) latest
                ORDER BY id
                """, logger: logger)
        }
        var messages: [ChatMessage] = []
        for try await (id, nick, text, added) in rows.decode((Int64, String, String, Date).self) {
            messages.append(ChatMessage(room: room, id: id, nick: nick, text: text, addedAt: WallClock.milliseconds(added)))
        }
        return messages
    }

    /// Deletes a removed room's messages and keeps a tombstone so no later
    /// command can write to it again.
    func remove(_ room: RoomID) async throws {
        try await client.withTransaction(logger: logger) { tx in
            try await tx.query(
                """
                INSERT INTO messaging.room_logs (room_id, removed_at) VALUES (\(room), now())
                ON CONFLICT (room_id) DO UPDATE SET removed_at = coalesce(messaging.room_logs.removed_at, now())
                """, logger: logger)
            try await tx.query("DELETE FROM messaging.messages WHERE room_id = \(room)", logger: logger)
        }
    }

    /// True for a unique violation: the idempotency key is already stored.
    /// `withTransaction` wraps what failed inside it in a `PostgresTransactionError`.
    static func isDuplicateKey(_ error: any Error) -> Bool {
        if let wrapped = error as? PostgresTransactionError {
            return [wrapped.closureError, wrapped.commitError].contains { $0.map(isDuplicateKey) ?? false }
        }
        return (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }


}
