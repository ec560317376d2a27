import Foundation
import GeoChatDomain
import GeoChatPostgres
import PostgresNIO

/// The expiry service's own tables (schema `expiry`): one row per job in
/// `expiry.jobs`, and a real run's selection in `expiry.job_batches`, one row
/// per removal batch with its state, so a run killed half-way resumes where it
/// stopped. docs/architecture.md ("Expiry") describes the states.
struct ExpiryJobStore: PostgresStore {
    let database: Database

    static let schema: StaticString = "expiry"
    static let migrations = [
        Migration(
            1, "expiry job history",
            [
                """
                CREATE TABLE expiry.jobs (
                    id bigserial PRIMARY KEY,
                    trigger text NOT NULL,
                    dry_run boolean NOT NULL DEFAULT false,
                    idle_before timestamptz NOT NULL,
                    started_at timestamptz NOT NULL DEFAULT now(),
                    finished_at timestamptz,
                    status text NOT NULL DEFAULT 'running',
                    examined integer NOT NULL DEFAULT 0,
                    removed integer NOT NULL DEFAULT 0,
                    failed integer NOT NULL DEFAULT 0,
                    error text)
                """
            ]),
        Migration(
            2, "resumable jobs: selection in batches, one running job",
            [
                """
                UPDATE expiry.jobs SET status = 'failed', finished_at = coalesce(finished_at, now()),
                    error = 'abandoned: started by an earlier version'
                WHERE status = 'running'
                """,
                """
                ALTER TABLE expiry.jobs
                    ADD COLUMN phase text NOT NULL DEFAULT 'selecting',
                    ADD COLUMN selected integer NOT NULL DEFAULT 0,
                    ADD COLUMN select_cursor bigint NOT NULL DEFAULT 0,
                    ADD COLUMN next_batch integer NOT NULL DEFAULT 0,
                    ADD COLUMN sample bigint[],
                    ADD COLUMN request_key text UNIQUE
                """,
                "UPDATE expiry.jobs SET phase = 'done' WHERE status <> 'running'",
                // One running job cluster-wide, whoever starts it (schedule or admin).
                "CREATE UNIQUE INDEX jobs_one_running ON expiry.jobs (status) WHERE status = 'running'",
                "CREATE INDEX jobs_by_trigger ON expiry.jobs (trigger, started_at)",
                """
                CREATE TABLE expiry.job_batches (
                    job_id bigint NOT NULL REFERENCES expiry.jobs (id) ON DELETE CASCADE,
                    batch integer NOT NULL,
                    rooms bigint[] NOT NULL,
                    state text NOT NULL DEFAULT 'selected'
                        CHECK (state IN ('selected', 'rooms_removed', 'done', 'failed')),
                    removed bigint[],
                    error text,
                    PRIMARY KEY (job_id, batch))
                """,
                "CREATE INDEX job_batches_pending ON expiry.job_batches (job_id, batch) WHERE state IN ('selected', 'rooms_removed')",
                // Per-room view for operators: what happened to each selected room.
                """
                CREATE VIEW expiry.job_rooms AS
                SELECT b.job_id, b.batch, r.room_id,
                    CASE WHEN b.state = 'failed' THEN 'failed'
                         WHEN r.room_id = ANY(b.removed) AND b.state = 'done' THEN 'removed'
                         WHEN r.room_id = ANY(b.removed) THEN 'rooms_removed'
                         WHEN b.state = 'done' THEN 'kept'
                         ELSE 'selected' END AS state
                FROM expiry.job_batches b, unnest(b.rooms) AS r(room_id)
                """,
            ]),
    ]

    /// What a runner needs to carry on with a job.
    struct Job: Sendable {
        let id: Int64
        let dryRun: Bool
        let idleBefore: Date
        var phase: String
        var selectCursor: RoomID
        var nextBatch: Int

        /// Rounded down: a room last visited exactly at the cutoff stays (the wire carries milliseconds).
        var idleBeforeMs: Int64 { Int64((idleBefore.timeIntervalSince1970 * 1000).rounded(.down)) }
        /// The tombstone reason rooms records: lets a retried batch learn what this job removed.
        var reason: String { "expiry job \(id)" }
    }

    struct Batch: Sendable {
        let number: Int
        let rooms: [RoomID]
        let state: String
        let removed: [RoomID]
    }

    // MARK: starting and reading jobs

    /// Creates a running job, unless one is running already: then that one is
    /// the answer (`created` false). A retried request (same `requestKey`)
    /// answers the job it created the first time.
    func start(trigger: String, dryRun: Bool, idleBefore: Date, requestKey: String?) async throws
        -> (report: ExpiryJobReport, created: Bool)
    {
        for _ in 0..<5 {
            if let requestKey, let earlier = try await report(requestKey: requestKey) {
                return (earlier, false)
            }
            let inserted = try await client.query(
                """
                INSERT INTO expiry.jobs (trigger, dry_run, idle_before, request_key)
                VALUES (\(trigger), \(dryRun), \(idleBefore), \(requestKey))
                ON CONFLICT DO NOTHING RETURNING id
                """, logger: logger)
            for try await id in inserted.decode(Int64.self) {
                if let created = try await report(id) { return (created, true) }
            }
            if let running = try await runningReport() { return (running, false) }
            // The running job finished between the two statements: try again.
        }
        throw ProtocolError.unavailable
    }

    /// The running job, if any (there is at most one).
    func running() async throws -> Job? {
        let rows = try await client.query(
            """
            SELECT id, dry_run, idle_before, phase, select_cursor, next_batch
            FROM expiry.jobs WHERE status = 'running'
            """, logger: logger)
        for try await (id, dryRun, idleBefore, phase, cursor, next) in rows.decode(
            (Int64, Bool, Date, String, RoomID, Int32).self)
        {
            return Job(
                id: id, dryRun: dryRun, idleBefore: idleBefore, phase: phase, selectCursor: cursor, nextBatch: Int(next)
            )
        }
        return nil
    }

    /// Whether the schedule owes a run: none started by it within `interval`.
    func scheduleDue(interval: Duration) async throws -> Bool {
        let seconds = Double(interval.components.seconds)
        let rows = try await client.query(
            """
            SELECT coalesce(max(started_at) < now() - make_interval(secs => \(seconds)), true)
            FROM expiry.jobs WHERE trigger = 'schedule'
            """, logger: logger)
        for try await due in rows.decode(Bool.self) { return due }
        return true
    }

    func report(_ id: Int64) async throws -> ExpiryJobReport? {
        try await reports(JobFilter(id: id)).first
    }

    func reports(limit: Int) async throws -> [ExpiryJobReport] {
        try await reports(JobFilter(limit: limit))
    }

    private func report(requestKey: String) async throws -> ExpiryJobReport? {
        try await reports(JobFilter(requestKey: requestKey)).first
    }

    private func runningReport() async throws -> ExpiryJobReport? {
        try await reports(JobFilter(runningOnly: true)).first
    }

    /// Which jobs a report read selects: every condition given (nil: any), newest first.
    private struct JobFilter {
        var id: Int64? = nil
        var requestKey: String? = nil
        var runningOnly = false
        var limit = 1
    }

    // One statement for every read of reports: SQL here is only ever a literal with bound values,
    // so the conditions not given are bound as NULL (planned away: each statement is planned with its values).
    private func reports(_ filter: JobFilter) async throws -> [ExpiryJobReport] {
        try await reports(
            client.query(
                """
                SELECT id, trigger, dry_run, status, idle_before, started_at, finished_at, selected, examined, removed,
                    failed, sample, error
                FROM expiry.jobs
                WHERE (\(filter.id)::bigint IS NULL OR id = \(filter.id))
                    AND (\(filter.requestKey)::text IS NULL OR request_key = \(filter.requestKey))
                    AND (NOT \(filter.runningOnly) OR status = 'running')
                ORDER BY id DESC LIMIT \(filter.limit)
                """, logger: logger))
    }

    private func reports(_ rows: PostgresRowSequence) async throws -> [ExpiryJobReport] {
        var reports: [ExpiryJobReport] = []
        for try await row in rows {
            let (
                id, trigger, dryRun, status, idleBefore, started, finished, selected, examined, removed, failed, sample,
                error
            ) =
                try row.decode(
                    (Int64, String, Bool, String, Date, Date, Date?, Int32, Int32, Int32, Int32, [RoomID]?, String?)
                        .self)
            reports.append(
                ExpiryJobReport(
                    id: id, trigger: trigger, dryRun: dryRun,
                    // The column holds what this type wrote; anything else is a job that did not finish well.
                    status: ExpiryJobStatus(rawValue: status) ?? .failed,
                    idleBeforeMs: WallClock.milliseconds(idleBefore),
                    startedAtMs: WallClock.milliseconds(started), finishedAtMs: finished.map(WallClock.milliseconds),
                    selected: Int(selected),
                    examined: Int(examined), removed: Int(removed), failed: Int(failed),
                    rooms: dryRun ? (sample ?? []) : nil, error: error))
        }
        return reports
    }

    // MARK: a run's progress

    /// Records one page of a real run's selection as batches, with the cursor,
    /// in one transaction: a restart continues after the last recorded page.
    func recordSelection(_ job: inout Job, batches: [[RoomID]], cursor: RoomID) async throws {
        let first = job.nextBatch
        let selected = batches.reduce(0) { $0 + $1.count }
        try await client.withTransaction(logger: logger) { tx in
            for (offset, rooms) in batches.enumerated() {
                try await tx.query(
                    "INSERT INTO expiry.job_batches (job_id, batch, rooms) VALUES (\(job.id), \(first + offset), \(rooms))",
                    logger: logger)
            }
            try await tx.query(
                """
                UPDATE expiry.jobs SET selected = selected + \(selected), select_cursor = \(cursor),
                    next_batch = \(first + batches.count)
                WHERE id = \(job.id)
                """, logger: logger)
        }
        job.selectCursor = cursor
        job.nextBatch = first + batches.count
    }

    /// Records one page of a dry run: the count, the cursor and the first
    /// `sampleLimit` rooms (the list the report shows).
    func recordDryRunPage(_ job: inout Job, rooms: [RoomID], cursor: RoomID, sampleLimit: Int) async throws {
        try await client.query(
            """
            UPDATE expiry.jobs SET selected = selected + \(rooms.count), select_cursor = \(cursor),
                sample = (coalesce(sample, '{}') || \(Array(rooms.prefix(sampleLimit))))[1:\(Int32(sampleLimit))]
            WHERE id = \(job.id)
            """, logger: logger)
        job.selectCursor = cursor
    }

    func selectionDone(_ job: inout Job) async throws {
        try await client.query("UPDATE expiry.jobs SET phase = 'removing' WHERE id = \(job.id)", logger: logger)
        job.phase = "removing"
    }

    /// Batches not finished yet, in order.
    func pendingBatches(of job: Job) async throws -> [Batch] {
        let rows = try await client.query(
            """
            SELECT batch, rooms, state, coalesce(removed, '{}') FROM expiry.job_batches
            WHERE job_id = \(job.id) AND state IN ('selected', 'rooms_removed') ORDER BY batch
            """, logger: logger)
        var batches: [Batch] = []
        for try await (number, rooms, state, removed) in rows.decode((Int32, [RoomID], String, [RoomID]).self) {
            batches.append(Batch(number: Int(number), rooms: rooms, state: state, removed: removed))
        }
        return batches
    }

    /// The rooms service removed `removed` of the batch (and said so); messages next.
    func roomsRemoved(_ job: Job, batch: Int, removed: [RoomID]) async throws {
        try await client.query(
            """
            UPDATE expiry.job_batches SET state = 'rooms_removed', removed = \(removed)
            WHERE job_id = \(job.id) AND batch = \(batch) AND state = 'selected'
            """, logger: logger)
    }

    /// The batch is finished; the job's counters move once (a batch already done changes nothing).
    func batchDone(_ job: Job, batch: Int, examined: Int, removed: Int) async throws {
        try await finishBatch(
            job, batch: batch, state: "done", examined: examined, removed: removed, failed: 0, error: nil)
    }

    /// An owner refused the batch; its rooms count as failed.
    func batchFailed(_ job: Job, batch: Int, rooms: Int, error: String) async throws {
        try await finishBatch(
            job, batch: batch, state: "failed", examined: rooms, removed: 0, failed: rooms, error: error)
    }

    private func finishBatch(
        _ job: Job, batch: Int, state: String, examined: Int, removed: Int, failed: Int, error: String?
    ) async throws {
        try await client.withTransaction(logger: logger) { tx in
            let rows = try await tx.query(
                """
                UPDATE expiry.job_batches SET state = \(state), error = \(error)
                WHERE job_id = \(job.id) AND batch = \(batch) AND state IN ('selected', 'rooms_removed')
                RETURNING batch
                """, logger: logger)
            var changed = false
            for try await _ in rows.decode(Int32.self) { changed = true }
            guard changed else { return }
            try await tx.query(
                """
                UPDATE expiry.jobs SET examined = examined + \(examined), removed = removed + \(removed),
                    failed = failed + \(failed)
                WHERE id = \(job.id)
                """, logger: logger)
        }
    }

    /// Ends the job. A dry run examined what it selected.
    func finish(_ job: Job, status: ExpiryJobStatus, error: String?) async throws {
        try await client.query(
            """
            UPDATE expiry.jobs SET status = \(status.rawValue), phase = 'done', finished_at = now(), error = \(error),
                examined = CASE WHEN dry_run THEN selected ELSE examined END
            WHERE id = \(job.id) AND status = 'running'
            """, logger: logger)
    }

    // MARK: the cluster-wide lock

    /// Runs `body` only if no other instance holds the expiry lock; false if one
    /// does. The lock belongs to one connection: if this process dies, PostgreSQL
    /// releases it and another runner (or this one, restarted) resumes the job.
    func exclusively(_ body: () async throws -> Void) async throws -> Bool {
        let key = Database.advisoryKey("geochat.expiry.run")
        return try await client.withConnection { connection in
            var locked = false
            for try await value in try await connection.query("SELECT pg_try_advisory_lock(\(key))", logger: logger)
                .decode(Bool.self)
            {
                locked = value
            }
            guard locked else { return false }
            do {
                try await body()
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(key))", logger: logger)
                throw error
            }
            _ = try await connection.query("SELECT pg_advisory_unlock(\(key))", logger: logger)
            return true
        }
    }
}
