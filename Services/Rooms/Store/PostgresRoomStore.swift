import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatPostgres
import Logging
import PostgresNIO

/// The rooms service's tables (schema `rooms`) and every query on them.
struct PostgresRoomStore: RoomStore, PostgresStore {
    let database: Database

    static let schema: StaticString = "rooms"
    static let migrations = [
        Migration(
            1, "rooms and memberships",
            [
                """
                CREATE TABLE rooms.rooms (
                    id bigserial PRIMARY KEY,
                    x double precision NOT NULL CHECK (x >= 0 AND x <= 1),
                    y double precision NOT NULL CHECK (y >= 0 AND y <= 1),
                    z smallint NOT NULL CHECK (z BETWEEN 0 AND 17),
                    topic text NOT NULL,
                    creator_session text,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    last_visited_at timestamptz NOT NULL DEFAULT now(),
                    is_lobby boolean NOT NULL DEFAULT false)
                """,
                // Region queries: one index range per zoom level in the asked range.
                "CREATE INDEX rooms_region ON rooms.rooms (z, x, y)",
                "CREATE INDEX rooms_idle ON rooms.rooms (last_visited_at) WHERE NOT is_lobby",
                "CREATE INDEX rooms_recent_creates ON rooms.rooms (creator_session, created_at)",
                """
                CREATE TABLE rooms.memberships (
                    room_id bigint NOT NULL REFERENCES rooms.rooms (id) ON DELETE CASCADE,
                    session_id text NOT NULL,
                    nick text NOT NULL,
                    joined_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (room_id, session_id))
                """,
                "CREATE INDEX memberships_by_session ON rooms.memberships (session_id)",
                """
                CREATE TABLE rooms.removed_rooms (
                    id bigint PRIMARY KEY,
                    removed_at timestamptz NOT NULL DEFAULT now(),
                    reason text NOT NULL)
                """,
            ]),
        Migration(
            2, "the lobby room of the add/messages dialect",
            ["INSERT INTO rooms.rooms (x, y, z, topic, is_lobby) VALUES (0.5, 0.5, 0, 'Lobby', true)"]),
        Migration(
            3, "ended sessions, so a late message event cannot make them members again",
            [
                """
                CREATE TABLE rooms.ended_sessions (
                    session_id text PRIMARY KEY,
                    ended_at timestamptz NOT NULL DEFAULT now())
                """,
                "CREATE INDEX ended_sessions_age ON rooms.ended_sessions (ended_at)",
            ]),
        Migration(
            4, "memberships know their nick's session version and the member's last join or say",
            [
                """
                ALTER TABLE rooms.memberships
                    ADD COLUMN nick_version bigint NOT NULL DEFAULT 0,
                    ADD COLUMN active_at timestamptz NOT NULL DEFAULT now()
                """
            ]),
        Migration(5, "the outbox of room events", PostgresEventOutbox.tableStatements),
        Migration(
            6, "a room's most recently active members first (participants read at most Limits.maxMembersRead)",
            ["CREATE INDEX memberships_recent ON rooms.memberships (room_id, active_at DESC)"]),
        Migration(
            7, "removals by time, for a gateway catching up after its room snapshot",
            ["CREATE INDEX removed_rooms_recent ON rooms.removed_rooms (removed_at)"]),
        // The cascade ran once per removed room (45 % of an expiry batch's statement,
        // docs/benchmarks.md, "Expiry"). What it guaranteed, no membership of a
        // removed room, is kept by `deleteMemberships(ofRemoved:)`.
        Migration(
            8, "memberships of removed rooms are deleted by the removal, one statement a batch",
            ["ALTER TABLE rooms.memberships DROP CONSTRAINT memberships_room_id_fkey"]),
        Migration(
            9, "operators' changes of rooms, for a gateway catching up after its room snapshot",
            [
                "ALTER TABLE rooms.rooms ADD COLUMN changed_at timestamptz",
                "CREATE INDEX rooms_changed ON rooms.rooms (changed_at) WHERE changed_at IS NOT NULL",
            ]),
        // By session and time alone, a create's repeat check read every room its
        // session made within the window: ~500 index entries a create for one
        // session creating 230 rooms a second (docs/benchmarks.md, "Writes").
        Migration(
            10, "a create's repeat found by its session and place, not among every room the session just made",
            [
                "DROP INDEX rooms.rooms_recent_creates",
                "CREATE INDEX rooms_recent_creates ON rooms.rooms (creator_session, z, x, y, created_at)",
            ]),
    ]

    /// Deletes the memberships of rooms this transaction has just deleted, as
    /// its own statement after the rooms' delete. No membership outlives its
    /// room, without a foreign key: every statement that makes a membership
    /// holds a lock on its room row that a delete waits for (`join` updates the
    /// row, `sayersJoined` locks it `FOR KEY SHARE`), so this statement's
    /// snapshot, taken once the delete has waited them out, sees the
    /// memberships they made, and a membership statement after the delete finds
    /// no room. `MembershipRemovalTests` races a say's join and a `join` against a removal.
    static func deleteMemberships(ofRemoved rooms: [RoomID], on tx: TracedConnection, logger: Logger)
        async throws
    {
        guard !rooms.isEmpty else { return }
        try await tx.query("DELETE FROM rooms.memberships WHERE room_id = ANY(\(rooms))", logger: logger)
    }

    static let service = "rooms"
    var outbox: any Outbox<StagedEvent> { PostgresEventOutbox(database: database, service: Self.service) }

    /// How long an ended session is remembered: far longer than any event waits in a topic.
    static let endedSessionMemory = "1 day"

    /// Creates rooms, unless the same session created the same room within the
    /// retry window: then that room is the answer (phones on bad networks retry),
    /// and no event (the first one staged it). Two statements for the whole
    /// batch, one commit: the repeat checks and the new rooms' ids, then the
    /// rooms and their events' outbox rows (`PostgresEventOutbox`'s table).
    func create(_ asked: [NewRoom]) async throws -> [Announced<RoomInfo>] {
        // A room asked for twice in one batch is made once; the later ask is its repeat.
        var distinct: [NewRoom] = []
        var slot: [NewRoom: Int] = [:]
        for room in asked where slot[room] == nil {
            slot[room] = distinct.count
            distinct.append(room)
        }
        let answers = try await createDistinct(distinct)
        var answered = Set<Int>()
        return asked.map { room in
            let index = slot[room]!
            let answer = answers[index]
            return answered.insert(index).inserted ? answer : Announced(answer.value, event: nil)
        }
    }

    private func createDistinct(_ asked: [NewRoom]) async throws -> [Announced<RoomInfo>] {
        guard !asked.isEmpty else { return [] }
        let window = Date(timeIntervalSinceNow: -Double(Limits.createRetryWindowSeconds))
        let sessions = asked.map(\.session.value)
        let xs = asked.map(\.position.x)
        let ys = asked.map(\.position.y)
        let zs = asked.map { Int16($0.zoom.value) }
        let topics = asked.map(\.topic)
        // The earlier room of each repeat (its visit renewed), or the new room's id.
        let found = try await client.query(
            """
            WITH input AS (
                SELECT * FROM unnest(\(sessions)::text[], \(xs)::float8[], \(ys)::float8[], \(zs)::int2[],
                                     \(topics)::text[]) WITH ORDINALITY AS i(session, x, y, z, topic, ord)),
            earlier AS (
                SELECT i.ord, e.id FROM input i CROSS JOIN LATERAL (
                    SELECT id FROM rooms.rooms r
                    WHERE r.creator_session = i.session AND r.created_at > \(window)
                      AND r.x = i.x AND r.y = i.y AND r.z = i.z AND r.topic = i.topic
                    ORDER BY id LIMIT 1) e),
            visited AS (UPDATE rooms.rooms SET last_visited_at = now() WHERE id IN (SELECT id FROM earlier))
            SELECT ord, id, true FROM earlier
            UNION ALL
            SELECT ord, nextval('rooms.rooms_id_seq'), false FROM input WHERE ord NOT IN (SELECT ord FROM earlier)
            """, logger: logger)
        var rooms = [RoomInfo?](repeating: nil, count: asked.count)
        var fresh: [Int] = []
        for try await (ord, id, repeated) in found.decode((Int64, RoomID, Bool).self) {
            let index = Int(ord) - 1
            let room = asked[index]
            rooms[index] = RoomInfo(id: id, position: room.position, zoom: room.zoom, topic: room.topic)
            if !repeated { fresh.append(index) }
        }
        guard rooms.allSatisfy({ $0 != nil }) else { throw ProtocolError.unavailable }
        var answers = rooms.map { Announced($0!, event: nil) }
        guard !fresh.isEmpty else { return answers }
        fresh.sort()
        let events = try fresh.map { try EncodedEvent(RoomEvent.created(answers[$0].value)) }
        // The rooms and their outbox rows in one statement: one commit, and no
        // transaction to open and close (a create was five round trips before).
        let ids = fresh.map { answers[$0].value.id }
        let (newXs, newYs, newZs) = (fresh.map { xs[$0] }, fresh.map { ys[$0] }, fresh.map { zs[$0] })
        let (newTopics, newSessions) = (fresh.map { topics[$0] }, fresh.map { sessions[$0] })
        let staged = try await client.query(
            """
            WITH made AS (
                INSERT INTO rooms.rooms (id, x, y, z, topic, creator_session)
                SELECT * FROM unnest(\(ids)::bigint[], \(newXs)::float8[], \(newYs)::float8[], \(newZs)::int2[],
                                     \(newTopics)::text[], \(newSessions)::text[]))
            INSERT INTO outbox.events (service, topic, key, value)
            SELECT \(Self.service), t, k, v FROM unnest(\(events.map(\.topic)), \(events.map(\.key)), \(events.map(\.value)))
                WITH ORDINALITY AS r(t, k, v, n)
            ORDER BY n
            RETURNING seq
            """, logger: logger)
        var seqs: [Int64] = []
        for try await seq in staged.decode(Int64.self) { seqs.append(seq) }
        guard seqs.count == fresh.count else { throw ProtocolError.unavailable }
        // RETURNING follows the insertion order, which follows ORDER BY n.
        for (index, (seq, event)) in zip(fresh, zip(seqs.sorted(), events)) {
            answers[index].event = StagedEvent(seq: seq, record: event)
        }
        return answers
    }

    /// Rooms inside the box and zoom range, ordered by id; at most `cap`, the
    /// most recently active ones when more match.
    func region(_ query: RegionQuery) async throws -> [RoomInfo] {
        let box = query.box
        // `z = ANY(levels)`, not `z BETWEEN`: PostgreSQL then descends the (z, x, y)
        // index once per level with the x range as a bound. With a range on z it
        // reads every entry of those levels and only filters on x (no skip scan
        // before PostgreSQL 18): ~50 ms instead of ~1 ms at a million rooms.
        let levels = query.zooms.map { Int16($0) }
        let rows = try await client.query(
            """
            SELECT id, x, y, z, topic FROM (
                SELECT id, x, y, z, topic FROM rooms.rooms
                WHERE z = ANY(\(levels))
                  AND x BETWEEN \(box.minX) AND \(box.maxX)
                  AND y BETWEEN \(box.minY) AND \(box.maxY)
                ORDER BY last_visited_at DESC, id DESC
                LIMIT \(query.cap)) recent
            ORDER BY id
            """, logger: logger)
        return try await Self.rooms(rows)
    }

    func find(_ id: RoomID) async throws -> RoomInfo? {
        try await Self.rooms(
            client.query("SELECT id, x, y, z, topic FROM rooms.rooms WHERE id = \(id)", logger: logger)
        ).first
    }

    /// One row of six arrays, not a row per room: decoding a row costs far more
    /// than an array element, and a gateway's start-up reads every room
    /// (4,000 rows took half a second in the debug build, docs/benchmarks.md).
    /// A change window's three conditions each have an index (the primary key,
    /// `rooms_idle`, `rooms_changed`); without a window `$4` is null and they are not looked at.
    func page(after: RoomID, before: RoomID?, changes: RoomChangeWindow?, limit: Int) async throws -> [IndexedRoom] {
        let since = changes.map { WallClock.date($0.sinceMs) }
        let rows = try await client.query(
            """
            SELECT coalesce(array_agg(id ORDER BY id), '{}'), coalesce(array_agg(x ORDER BY id), '{}'),
                   coalesce(array_agg(y ORDER BY id), '{}'), coalesce(array_agg(z ORDER BY id), '{}'),
                   coalesce(array_agg(topic ORDER BY id), '{}'),
                   coalesce(array_agg(floor(extract(epoch FROM last_visited_at) * 1000)::bigint ORDER BY id), '{}')
            FROM (SELECT id, x, y, z, topic, last_visited_at FROM rooms.rooms
                  WHERE id > \(after) AND id < \(before ?? .max)
                    AND (\(since)::timestamptz IS NULL OR id > \(changes?.above ?? 0)
                         OR (last_visited_at >= \(since) AND NOT is_lobby) OR changed_at >= \(since))
                  ORDER BY id LIMIT \(limit)) page
            """, logger: logger)
        var rooms: [IndexedRoom] = []
        for try await (ids, xs, ys, zs, topics, visits) in rows.decode(
            ([RoomID], [Double], [Double], [Int16], [String], [Int64]).self)
        {
            rooms.reserveCapacity(ids.count)
            for i in ids.indices {
                guard let position = MercatorPoint(x: xs[i], y: ys[i]), let zoom = ZoomLevel(Int(zs[i])) else {
                    continue
                }
                rooms.append(
                    IndexedRoom(
                        room: RoomInfo(id: ids[i], position: position, zoom: zoom, topic: topics[i]),
                        visitedAtMs: visits[i]))
            }
        }
        return rooms
    }

    func removedRooms(since: Date, after: RoomID, limit: Int) async throws -> [RoomID] {
        let rows = try await client.query(
            """
            SELECT id FROM rooms.removed_rooms WHERE removed_at >= \(since) AND id > \(after) ORDER BY id LIMIT \(limit)
            """, logger: logger)
        var ids: [RoomID] = []
        for try await id in rows.decode(RoomID.self) { ids.append(id) }
        return ids
    }

    /// The checksum as `RoomTally` defines it: the sum of the ids modulo 2^62.
    func tally() async throws -> RoomTally {
        let rows = try await client.query(
            """
            SELECT count(*), (coalesce(sum(id), 0) % \(RoomTally.checksumModulus))::bigint FROM rooms.rooms
            """, logger: logger)
        for try await (count, checksum) in rows.decode((Int, Int64).self) {
            return RoomTally(count: count, idChecksum: checksum)
        }
        return RoomTally(count: 0, idChecksum: 0)
    }

    func highestID() async throws -> RoomID {
        let rows = try await client.query("SELECT coalesce(max(id), 0) FROM rooms.rooms", logger: logger)
        for try await id in rows.decode(RoomID.self) { return id }
        return 0
    }

    func lobby() async throws -> RoomInfo? {
        try await Self.rooms(
            client.query(
                "SELECT id, x, y, z, topic FROM rooms.rooms WHERE is_lobby ORDER BY id LIMIT 1", logger: logger)
        ).first
    }

    /// Makes the session a participant (or renames it there) and marks a visit.
    /// False when the room does not exist. With `announce`, the `joined` event
    /// is staged in the same statement.
    func join(_ room: RoomID, session: SessionID, nick: String, nickVersion: Int64?, announce: Bool) async throws
        -> Announced<Bool>
    {
        // A nil version (a message's nick) never replaces a held nick: -1 loses to every version.
        let version = nickVersion ?? -1
        let event = announce ? try EncodedEvent(RoomEvent.joined(room: room, session: session, nick: nick)) : nil
        let rows = try await client.query(
            """
            WITH visited AS (UPDATE rooms.rooms SET last_visited_at = now() WHERE id = \(room) RETURNING id),
            joined AS (
                INSERT INTO rooms.memberships AS m (room_id, session_id, nick, nick_version)
                SELECT id, \(session.value), \(nick), greatest(\(version), 0) FROM visited
                WHERE NOT EXISTS (SELECT 1 FROM rooms.ended_sessions WHERE session_id = \(session.value))
                ON CONFLICT (room_id, session_id) DO UPDATE SET
                    nick = CASE WHEN \(version) >= m.nick_version THEN EXCLUDED.nick ELSE m.nick END,
                    nick_version = greatest(m.nick_version, \(version)),
                    active_at = now()
                RETURNING room_id),
            announced AS (
                INSERT INTO outbox.events (service, topic, key, value)
                SELECT \(Self.service), \(event?.topic ?? ""), \(event?.key ?? ""), \(event?.value ?? "") FROM joined
                WHERE \(event != nil)
                RETURNING seq)
            SELECT (SELECT room_id FROM joined), (SELECT seq FROM announced)
            """, logger: logger)
        for try await (joined, seq) in rows.decode((Int64?, Int64?).self) {
            guard let seq, let event else { return Announced(joined != nil, event: nil) }
            return Announced(joined != nil, event: StagedEvent(seq: seq, record: event))
        }
        return Announced(false, event: nil)
    }

    /// One statement for every sayer (see `RoomStore.sayersJoined`), then the
    /// `joined` events of the memberships it made, staged in the same transaction.
    func sayersJoined(_ sayers: [Sayer]) async throws -> [StagedEvent] {
        guard !sayers.isEmpty else { return [] }
        let rooms = sayers.map(\.room)
        // No NULL inside a bound array: an anonymous post's author is '' (a session id never is).
        let sessions = sayers.map { $0.session?.value ?? "" }
        let nicks = sayers.map(\.nick)
        let resolution = Double(RoomRules.visitResolution.components.seconds)
        return try await client.withTransaction(logger: logger) { tx in
            // `live` locks the rooms a membership is made in: a removal waits for the lock
            // (`deleteMemberships(ofRemoved:)`), and a room removed first is not joined.
            let rows = try await tx.query(
                """
                WITH input AS (
                    SELECT DISTINCT ON (room, session) room, session, nick
                    FROM unnest(\(rooms)::bigint[], \(sessions)::text[], \(nicks)::text[]) WITH ORDINALITY AS i(room, session, nick, n)
                    ORDER BY room, session, n DESC),
                visited AS (
                    UPDATE rooms.rooms SET last_visited_at = now()
                    WHERE id IN (SELECT room FROM input) AND last_visited_at < now() - make_interval(secs => \(resolution))),
                live AS (
                    SELECT id FROM rooms.rooms WHERE id IN (SELECT room FROM input) ORDER BY id FOR KEY SHARE),
                joined AS (
                    INSERT INTO rooms.memberships AS m (room_id, session_id, nick, nick_version)
                    SELECT i.room, i.session, i.nick, 0 FROM input i JOIN live r ON r.id = i.room
                    WHERE i.session <> ''
                      AND NOT EXISTS (SELECT 1 FROM rooms.ended_sessions e WHERE e.session_id = i.session)
                    ORDER BY i.room, i.session
                    ON CONFLICT (room_id, session_id) DO UPDATE SET active_at = now()
                    RETURNING room_id, session_id, nick, xmax = 0 AS made)
                SELECT room_id, session_id, nick FROM joined WHERE made ORDER BY room_id, session_id
                """, logger: logger)
            var made: [RoomEvent] = []
            for try await (room, session, nick) in rows.decode((RoomID, String, String).self) {
                guard let session = SessionID(session) else { continue }
                made.append(.joined(room: room, session: session, nick: nick))
            }
            guard !made.isEmpty else { return [] }
            return try await PostgresEventOutbox.stage(
                try made.map { try EncodedEvent($0) }, service: Self.service, on: tx, logger: logger)
        }
    }

    /// False when the room does not exist; leaving twice is fine (and announced
    /// again: readers take a `left` of a non-member as nothing).
    func leave(_ room: RoomID, session: SessionID) async throws -> Announced<Bool> {
        try await client.withTransaction(logger: logger) { tx in
            let rows = try await tx.query(
                """
                WITH gone AS (DELETE FROM rooms.memberships WHERE room_id = \(room) AND session_id = \(session.value))
                SELECT count(*) FROM rooms.rooms WHERE id = \(room)
                """, logger: logger)
            var exists = false
            for try await n in rows.decode(Int64.self) { exists = n > 0 }
            guard exists else { return Announced(false, event: nil) }
            let event = try await PostgresEventOutbox.stage(
                try EncodedEvent(RoomEvent.left(room: room, session: session)), service: Self.service, on: tx,
                logger: logger)
            return Announced(true, event: event)
        }
    }

    /// The room's most recently active members (at most `Limits.maxMembersRead`),
    /// ordered by the nickname's plain byte order; nil for no such room.
    func members(_ room: RoomID) async throws -> [Member]? {
        guard try await find(room) != nil else { return nil }
        let rows = try await client.query(
            """
            SELECT session_id, nick, nick_version, active_at FROM (
                SELECT session_id, nick, nick_version, active_at FROM rooms.memberships WHERE room_id = \(room)
                ORDER BY active_at DESC LIMIT \(Limits.maxMembersRead)) recent
            ORDER BY nick COLLATE "C", session_id
            """, logger: logger)
        var members: [Member] = []
        for try await (session, nick, version, active) in rows.decode((String, String, Int64, Date).self) {
            if let id = SessionID(session) {
                members.append(
                    Member(session: id, nick: nick, nickVersion: version, activeAtMs: WallClock.milliseconds(active)))
            }
        }
        return members
    }

    /// Writes only memberships whose last activity is older: a repeat writes nothing.
    func markPresent(_ session: SessionID, at: Date) async throws {
        try await client.query(
            """
            UPDATE rooms.memberships SET active_at = \(at)
            WHERE session_id = \(session.value) AND active_at < \(at)
            """, logger: logger)
    }

    func renameMember(_ session: SessionID, nick: String, version: Int64) async throws {
        try await client.query(
            """
            UPDATE rooms.memberships SET nick = \(nick), nick_version = \(version)
            WHERE session_id = \(session.value) AND nick_version < \(version)
            """, logger: logger)
    }

    /// An ended session leaves every room for good: message events and session
    /// events arrive on different topics in no fixed order, so a `say` of the
    /// session read after its end must not make it a member again (`join` checks).
    func removeMemberships(of session: SessionID) async throws {
        try await client.withTransaction(logger: logger) { tx in
            try await tx.query(
                "INSERT INTO rooms.ended_sessions (session_id) VALUES (\(session.value)) ON CONFLICT DO NOTHING",
                logger: logger)
            try await tx.query("DELETE FROM rooms.memberships WHERE session_id = \(session.value)", logger: logger)
            try await tx.query(
                "DELETE FROM rooms.ended_sessions WHERE ended_at < now() - \(Self.endedSessionMemory)::interval",
                logger: logger)
        }
    }

    static func rooms(_ rows: PostgresRowSequence) async throws -> [RoomInfo] {
        var rooms: [RoomInfo] = []
        for try await (id, x, y, z, topic) in rows.decode((RoomID, Double, Double, Int16, String).self) {
            guard let position = MercatorPoint(x: x, y: y), let zoom = ZoomLevel(Int(z)) else { continue }
            rooms.append(RoomInfo(id: id, position: position, zoom: zoom, topic: topic))
        }
        return rooms
    }
}
