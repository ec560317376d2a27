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
        Migration(
            3, "one spelling of the repeat lookup",
            [
                // An anonymous post's author is '' in the lookup, as in the
                // bound arrays of `append(_:)`, so one condition serves both.
                "CREATE INDEX messages_by_repeat ON messaging.messages (room_id, (coalesce(author_session, '')), added_at)",
                "DROP INDEX messaging.messages_by_author",
            ]),
        Migration(
            4, "removed messages",
            [
                // An operator's removal keeps the row as a tombstone (text gone):
                // ids stay dense, and a gateway's timeline learns the removal in order.
                "ALTER TABLE messaging.messages ADD COLUMN removed_at timestamptz",
                // A session's messages in every room (a sender's removal), from a time on.
                """
                CREATE INDEX messages_by_session ON messaging.messages (author_session, added_at)
                WHERE author_session IS NOT NULL
                """,
                // How many of a room's messages were removed: the head check's second number, by which a
                // gateway that missed a removal's event finds it (`RoomHead.removed`).
                "ALTER TABLE messaging.room_logs ADD COLUMN removed_count bigint NOT NULL DEFAULT 0",
            ]),
    ]

    /// Relay passes take this transaction-level advisory lock: one pass at a
    /// time cluster-wide, so a room's events leave in id order.
    static let relayLock = Database.advisoryKey("geochat.messaging.outbox-relay")

    func state(of room: RoomID) async throws -> RoomLogState {
        let rows = try await client.query(
            """
            SELECT last_id, removed_at IS NOT NULL, removed_count FROM messaging.room_logs WHERE room_id = \(room)
            """, logger: logger)
        for try await (head, removed, removedMessages) in rows.decode((MessageID, Bool, Int64).self) {
            return removed ? .removed : .open(head: head, removed: removedMessages)
        }
        return .unknown
    }

    /// Inserted in ascending order, so two instances opening overlapping sets
    /// never wait on each other in a cycle.
    func open(_ rooms: [RoomID]) async throws {
        guard !rooms.isEmpty else { return }
        try await client.query(
            """
            INSERT INTO messaging.room_logs (room_id)
            SELECT DISTINCT room FROM unnest(\(rooms)) AS r(room) ORDER BY room
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// The message stored earlier under this idempotency key, if any.
    func stored(key: String) async throws -> (ChatMessage, author: SessionID?)? {
        let rows = try await client.query(
            """
            SELECT room_id, id, nick, text, added_at, author_session, removed_at IS NOT NULL FROM messaging.messages
            WHERE idempotency_key = \(key)
            """, logger: logger)
        for try await (room, id, nick, text, added, author, removed) in rows.decode(
            (RoomID, MessageID, String, String, Date, String?, Bool).self)
        {
            return (
                ChatMessage(
                    room: room, id: id, nick: nick, text: text, addedAt: WallClock.milliseconds(added), removed: removed
                ),
                author.flatMap(SessionID.init)
            )
        }
        return nil
    }

    /// Appends a message with the room's next id, or finds it repeated: the
    /// one statement of `append(_:)`, for one say. A repeated idempotency key
    /// (stored before, or committed by another instance meanwhile: a unique
    /// violation, see `isDuplicateKey`) throws `DuplicateIdempotencyKey`, and
    /// nothing is stored. Nil when the room's log is removed or not open here
    /// yet (`state(of:)` tells which).
    func append(
        room: RoomID, nick: String, text: String, author: SessionID?, key: String, commitBy: Deadline
    ) async throws -> Appended? {
        let say = NewMessage(room: room, nick: nick, text: text, author: author, key: key, commitBy: commitBy)
        do {
            return try await append([say])[0].get()
        } catch  where Self.isDuplicateKey(error) {
            throw DuplicateIdempotencyKey()
        }
    }

    /// Group commit: the says of many rooms in one transaction, so they share
    /// one commit (one WAL flush) instead of one each. Two statements: the
    /// rooms' log rows locked first, in room order (it orders each room's
    /// writers, so ids are dense and commit in id order, and two instances
    /// locking overlapping rooms during a rebalance cannot deadlock); then one
    /// statement, whose snapshot, taken once the locks are held, sees every
    /// message committed before (two instances running a phone's repeat at
    /// once store it once). For every say it finds its idempotency key stored
    /// before, or a phone's repeat (`MessageRules.repeatWindow`: the one
    /// spelling of that rule in SQL, on the `messages_by_repeat` index), or
    /// takes its room's next id and inserts the message and its outbox row.
    /// Rooms differ within a batch, so each room's ids stay dense and in
    /// order. Past any say's `commitBy` the whole batch rolls back instead of
    /// committing: the requester stops waiting at its deadline and must not be
    /// told "unavailable" about a message that is then stored after all (the
    /// caller then runs the says one by one, each against its own deadline).
    func append(_ says: [NewMessage]) async throws -> [Result<Appended?, DuplicateIdempotencyKey>] {
        let rooms = says.map(\.room)
        let nicks = says.map(\.nick)
        let texts = says.map(\.text)
        let keys = says.map(\.key)
        // No NULL inside a bound array: an anonymous post's author is '' (a session id never is).
        let authors = says.map { $0.author?.value ?? "" }
        let window = Double(MessageRules.repeatWindowMs) / 1000
        return try await client.withTransaction(logger: logger) { tx in
            let locked = try await tx.query(
                """
                SELECT room_id FROM messaging.room_logs WHERE room_id = ANY(\(rooms)) AND removed_at IS NULL
                ORDER BY room_id FOR NO KEY UPDATE
                """, logger: logger)
            var open: [RoomID] = []
            for try await room in locked.decode(RoomID.self) { open.append(room) }
            let rows = try await tx.query(
                """
                WITH input AS (
                    SELECT * FROM unnest(\(rooms)::bigint[], \(nicks)::text[], \(texts)::text[], \(authors)::text[],
                                         \(keys)::text[]) WITH ORDINALITY AS i(room, nick, text, author, key, ord)),
                dup AS (
                    SELECT i.ord FROM input i WHERE EXISTS (
                        SELECT 1 FROM messaging.messages m WHERE m.idempotency_key = i.key)),
                earlier AS (
                    SELECT i.ord, e.id, e.added_at FROM input i CROSS JOIN LATERAL (
                        SELECT id, added_at FROM messaging.messages m
                        WHERE m.room_id = i.room AND coalesce(m.author_session, '') = i.author
                          AND m.added_at > now() - make_interval(secs => \(window)) AND m.nick = i.nick AND m.text = i.text
                        ORDER BY id DESC LIMIT 1) e
                    WHERE i.ord NOT IN (SELECT ord FROM dup)),
                fresh AS (
                    SELECT * FROM input i WHERE i.room = ANY(\(open))
                      AND i.ord NOT IN (SELECT ord FROM dup) AND i.ord NOT IN (SELECT ord FROM earlier)),
                next AS (
                    UPDATE messaging.room_logs l SET last_id = l.last_id + 1 FROM fresh f
                    WHERE l.room_id = f.room RETURNING l.room_id, l.last_id),
                inserted AS (
                    INSERT INTO messaging.messages (room_id, id, nick, text, author_session, idempotency_key)
                    SELECT f.room, n.last_id, f.nick, f.text, nullif(f.author, ''), f.key
                    FROM fresh f JOIN next n ON n.room_id = f.room
                    RETURNING room_id, id, added_at),
                outbox AS (INSERT INTO messaging.outbox (room_id, id) SELECT room_id, id FROM inserted)
                SELECT f.ord, 0, i.id, i.added_at FROM fresh f JOIN inserted i ON i.room_id = f.room
                UNION ALL SELECT ord, 1, id, added_at FROM earlier
                UNION ALL SELECT ord, 2, 0, now() FROM dup
                """, logger: logger)
            var answers = [Result<Appended?, DuplicateIdempotencyKey>](repeating: .success(nil), count: says.count)
            for try await (ord, kind, id, added) in rows.decode((Int64, Int32, MessageID, Date).self) {
                let index = Int(ord) - 1
                let say = says[index]
                let message = ChatMessage(
                    room: say.room, id: id, nick: say.nick, text: say.text, addedAt: WallClock.milliseconds(added))
                switch kind {
                case 0: answers[index] = .success(.stored(message))
                case 1: answers[index] = .success(.repeated(message, author: say.author))
                default: answers[index] = .failure(DuplicateIdempotencyKey())
                }
            }
            let late = zip(says, answers).contains { say, answer in
                if case .success(.stored?) = answer { return say.commitBy.hasPassed() }
                return false
            }
            if late { throw ProtocolError.unavailable }  // rolls back
            return answers
        }
    }

    func heads(_ rooms: [RoomID]) async throws -> [RoomHead] {
        guard !rooms.isEmpty else { return [] }
        let rows = try await client.query(
            """
            SELECT room_id, last_id, removed_count FROM messaging.room_logs
            WHERE room_id = ANY(\(rooms)) AND removed_at IS NULL
            """, logger: logger)
        var heads: [RoomHead] = []
        for try await (room, head, removed) in rows.decode((RoomID, MessageID, Int64).self) {
            heads.append(RoomHead(room: room, head: head, removed: removed))
        }
        return heads
    }

    func shownFrom(_ rooms: [RoomID]) async throws -> [RoomID: MessageID] {
        guard !rooms.isEmpty else { return [:] }
        // One snapshot for the head and the lowest shown id: a say committed meanwhile is above both.
        let rows = try await client.query(
            """
            SELECT l.room_id, coalesce(
                (SELECT min(m.id) FROM messaging.messages m WHERE m.room_id = l.room_id AND m.removed_at IS NULL),
                l.last_id + 1)
            FROM messaging.room_logs l WHERE l.room_id = ANY(\(rooms)) AND l.removed_at IS NULL
            """, logger: logger)
        var from: [RoomID: MessageID] = [:]
        for try await (room, first) in rows.decode((RoomID, MessageID).self) { from[room] = first }
        return from
    }

    /// Messages with id > `after` oldest first, or the latest `limit`; all with
    /// ids up to the head read first, so the answer has no holes: removed
    /// ones as tombstones, or (`skipRemoved`) left out, `limit` then counting
    /// the others.
    func history(room: RoomID, head: MessageID, after: MessageID?, limit: Int, skipRemoved: Bool) async throws
        -> [ChatMessage]
    {
        let rows: PostgresRowSequence
        if let after {
            rows = try await client.query(
                """
                SELECT id, nick, text, added_at, removed_at IS NOT NULL FROM messaging.messages
                WHERE room_id = \(room) AND id > \(after) AND id <= \(head) AND (removed_at IS NULL OR NOT \(skipRemoved))
                ORDER BY id LIMIT \(limit)
                """, logger: logger)
        } else {
            rows = try await client.query(
                """
                SELECT id, nick, text, added_at, removed FROM (
                    SELECT id, nick, text, added_at, removed_at IS NOT NULL AS removed FROM messaging.messages
                    WHERE room_id = \(room) AND id <= \(head) AND (removed_at IS NULL OR NOT \(skipRemoved))
                    ORDER BY id DESC LIMIT \(limit)) latest
                ORDER BY id
                """, logger: logger)
        }
        var messages: [ChatMessage] = []
        for try await (id, nick, text, added, removed) in rows.decode((MessageID, String, String, Date, Bool).self) {
            messages.append(
                ChatMessage(
                    room: room, id: id, nick: nick, text: text, addedAt: WallClock.milliseconds(added), removed: removed
                ))
        }
        return messages
    }

    /// Removes the selected messages that are not removed yet, oldest first, at
    /// most `limit`, in one transaction: each row keeps its id and loses its
    /// text (a tombstone), and its event goes in the outbox with it, so every
    /// gateway learns it as it learns a new message. A say committed before
    /// is removed whole, one committed after is kept whole. Messages of
    /// removed rooms are gone already.
    func remove(_ selection: MessageSelection, limit: Int) async throws -> [ChatMessage] {
        // One message (`id`), or one author's: named (`session`), or the writer of `sender`.
        let (room, id, session, sender, since): (RoomID?, MessageID?, String?, MessageKey?, Date)
        switch selection {
        case .message(let inRoom, let message):
            (room, id, session, sender, since) = (inRoom, message, nil, nil, .distantPast)
        case .bySession(let author, let inRoom, let sinceMs):
            (room, id, session, sender, since) = (inRoom, nil, author.value, nil, Self.date(sinceMs))
        case .bySenderOf(let message, let inRoom, let sinceMs):
            (room, id, session, sender, since) = (inRoom, nil, nil, message, Self.date(sinceMs))
        }
        let bySender = session != nil || sender != nil
        let rows = try await client.query(
            """
            WITH author AS (
                SELECT coalesce(\(session)::text, (
                    SELECT author_session FROM messaging.messages
                    WHERE room_id = \(sender?.room) AND id = \(sender?.id))) AS session),
            chosen AS (
                SELECT m.room_id, m.id FROM messaging.messages m
                JOIN messaging.room_logs l ON l.room_id = m.room_id AND l.removed_at IS NULL
                WHERE m.removed_at IS NULL AND m.added_at >= \(since)
                  AND (\(room)::bigint IS NULL OR m.room_id = \(room)) AND (\(id)::bigint IS NULL OR m.id = \(id))
                  AND (NOT \(bySender) OR m.author_session = (SELECT session FROM author))
                ORDER BY m.added_at, m.room_id, m.id LIMIT \(limit) FOR UPDATE OF m),
            removed AS (
                UPDATE messaging.messages m SET text = '', removed_at = now() FROM chosen c
                WHERE m.room_id = c.room_id AND m.id = c.id
                RETURNING m.room_id, m.id, m.nick, m.added_at),
            queued AS (INSERT INTO messaging.outbox (room_id, id) SELECT room_id, id FROM removed ON CONFLICT DO NOTHING),
            counted AS (
                UPDATE messaging.room_logs l SET removed_count = l.removed_count + c.n
                FROM (SELECT room_id, count(*) AS n FROM removed GROUP BY room_id) c WHERE l.room_id = c.room_id)
            SELECT room_id, id, nick, added_at FROM removed ORDER BY room_id, id
            """, logger: logger)
        var tombstones: [ChatMessage] = []
        for try await (room, id, nick, added) in rows.decode((RoomID, MessageID, String, Date).self) {
            tombstones.append(
                ChatMessage(
                    room: room, id: id, nick: nick, text: "", addedAt: WallClock.milliseconds(added), removed: true))
        }
        return tombstones
    }

    private static func date(_ millisecondsSince1970: Int64) -> Date {
        Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000)
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

/// The messaging service's part of administration: message counts per room.
extension PostgresMessageStore {
    func messageCounts(_ rooms: [RoomID]) async throws -> [RoomMessageCount] {
        let rows = try await database.client.query(
            """
            SELECT room_id, count(*) FROM messaging.messages WHERE room_id = ANY(\(rooms)) AND removed_at IS NULL
            GROUP BY room_id
            """, logger: database.logger)
        var counts = Dictionary(uniqueKeysWithValues: rooms.map { ($0, 0) })
        for try await (room, n) in rows.decode((RoomID, Int64).self) { counts[room] = Int(n) }
        return rooms.map { RoomMessageCount(room: $0, messages: counts[$0] ?? 0) }
    }
}

extension PostgresMessageStore {
    /// Tombstones the logs of many removed rooms and deletes their messages, in
    /// one transaction (all or nothing); repeating it changes nothing. Returns
    /// how many messages went.
    func remove(rooms: [RoomID]) async throws -> Int {
        guard !rooms.isEmpty else { return 0 }
        return try await database.client.withTransaction(logger: database.logger) { tx in
            try await tx.query(
                """
                INSERT INTO messaging.room_logs (room_id, removed_at) SELECT unnest(\(rooms)::bigint[]), now()
                ON CONFLICT (room_id) DO UPDATE SET removed_at = coalesce(messaging.room_logs.removed_at, now())
                WHERE messaging.room_logs.removed_at IS NULL
                """, logger: database.logger)
            let rows = try await tx.query(
                """
                WITH deleted AS (DELETE FROM messaging.messages WHERE room_id = ANY(\(rooms)) RETURNING 1)
                SELECT count(*) FROM deleted
                """, logger: database.logger)
            var count = 0
            for try await n in rows.decode(Int64.self) { count = Int(n) }
            return count
        }
    }
}
