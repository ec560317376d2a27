import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatRuntime
import Logging

/// Carries out one expiry job, from wherever it stopped:
///
/// 1. selecting: page through the rooms service's idle rooms (by id, so a page
///    boundary is a cursor) and record each page as batches with the cursor;
/// 2. removing: each pending batch goes to the rooms service (which removes the
///    rooms still idle, re-checked in its transaction, and names all it removed
///    for this job, earlier attempts included), then its removed rooms go to the
///    messaging service (messages deleted, logs tombstoned); the batch is done.
///
/// Every step is idempotent and recorded before the next, so a restart at any
/// point repeats at most one step of a batch and never removes a room twice.
/// A dry run only selects: it counts and lists, and changes nothing.
struct ExpiryRun: Sendable {
    let bus: any CommandBus
    let jobs: ExpiryJobStore
    let settings: ExpirySettings
    /// Seals the removals: their owners refuse them without it.
    let operatorSeal: OperatorSeal
    let logger: Logger

    /// An owner refused a command outright (not a timeout): retrying will not help.
    struct Refused: Error {
        let error: ProtocolError
    }

    func execute(_ job: ExpiryJobStore.Job) async throws {
        var job = job
        var log = logger
        log[metadataKey: "job"] = "\(job.id)"
        let started = ContinuousClock.now
        ExpiryProgress.started(job: job.id)
        do {
            try await run(&job, logger: log)
        } catch {
            await reportProgress(of: job.id, finishedAs: .failed)
            throw error
        }
        await reportProgress(of: job.id, finishedAs: .finished)
        if let report = try await jobs.report(job.id), report.selected > 0 || report.failed > 0 {
            log.info(
                "expiry job finished",
                metadata: [
                    "dry_run": "\(job.dryRun)", "selected": "\(report.selected)", "removed": "\(report.removed)",
                    "failed": "\(report.failed)", "seconds": "\(Self.seconds(ContinuousClock.now - started))",
                ])
        }
    }

    private func run(_ job: inout ExpiryJobStore.Job, logger log: Logger) async throws {
        if job.phase == "selecting" {
            if job.selectCursor > 0 {
                log.info("expiry job resumes its selection", metadata: ["after_room": "\(job.selectCursor)"])
            }
            try await select(&job)
        } else {
            log.info("expiry job resumes its removal")
        }
        if !job.dryRun { try await removeSelected(job, logger: log) }
        try await jobs.finish(job, status: .finished, error: nil)
    }

    /// The job's counts as recorded, for the metrics (`ExpiryProgress`); best effort.
    private func reportProgress(of job: Int64, finishedAs status: ExpiryJobStatus? = nil) async {
        guard let report = try? await jobs.report(job) else { return }
        if let status {
            ExpiryProgress.finished(
                job: job, status: status.rawValue, examined: report.examined, removed: report.removed,
                failed: report.failed)
        } else {
            ExpiryProgress.progress(examined: report.examined, removed: report.removed, failed: report.failed)
        }
    }

    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.2f", Double(seconds) + Double(attoseconds) / 1e18)
    }

    private func select(_ job: inout ExpiryJobStore.Job) async throws {
        while true {
            let page = try await call(
                SelectIdleRooms(
                    after: job.selectCursor, idleBeforeMs: job.idleBeforeMs, limit: settings.pageSize, job: job.id),
                idempotencyKey: "expiry-\(job.id)-select-\(job.selectCursor)")
            guard let last = page.last else { break }
            if job.dryRun {
                try await jobs.recordDryRunPage(&job, rooms: page, cursor: last, sampleLimit: settings.dryRunListLimit)
            } else {
                let batches = stride(from: 0, to: page.count, by: settings.batchSize).map {
                    Array(page[$0..<min($0 + settings.batchSize, page.count)])
                }
                try await jobs.recordSelection(&job, batches: batches, cursor: last)
            }
            if page.count < settings.pageSize { break }
        }
        try await jobs.selectionDone(&job)
    }

    /// Runs the pending batches, `parallel` at a time: while the rooms service
    /// removes one batch, the messaging service clears the previous one.
    private func removeSelected(_ job: ExpiryJobStore.Job, logger: Logger) async throws {
        let pending = try await jobs.pendingBatches(of: job)
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = pending.makeIterator()
            for _ in 0..<settings.parallel {
                guard let batch = next.next() else { break }
                group.addTask { try await remove(batch, of: job, logger: logger) }
            }
            while try await group.next() != nil {
                guard let batch = next.next() else { continue }
                group.addTask { try await remove(batch, of: job, logger: logger) }
            }
        }
    }

    private func remove(_ batch: ExpiryJobStore.Batch, of job: ExpiryJobStore.Job, logger: Logger) async throws {
        do {
            var removed = batch.removed
            if batch.state == "selected" {
                let ids = try await call(
                    operatorSeal.sealed(
                        RemoveIdleRooms(
                            rooms: batch.rooms, idleBeforeMs: job.idleBeforeMs, reason: job.reason, job: job.id)),
                    idempotencyKey: "expiry-\(job.id)-rooms-\(batch.number)")
                removed = ids
                try await jobs.roomsRemoved(job, batch: batch.number, removed: ids)
            }
            if !removed.isEmpty {
                _ = try await call(
                    operatorSeal.sealed(RemoveRoomMessages(rooms: removed, job: job.id, batch: batch.number)),
                    idempotencyKey: "expiry-\(job.id)-messages-\(batch.number)")
            }
            try await jobs.batchDone(job, batch: batch.number, examined: batch.rooms.count, removed: removed.count)
            await reportProgress(of: job.id)
        } catch let refused as Refused {
            logger.error(
                "expiry batch refused",
                metadata: [
                    "batch": "\(batch.number)", "rooms": "\(batch.rooms.count)", "error": "\(refused.error.text)",
                ])
            try await jobs.batchFailed(job, batch: batch.number, rooms: batch.rooms.count, error: refused.error.text)
        }
    }

    /// A request to an owner, asked again (same idempotency key) until it is
    /// answered: an owner or the broker being away delays the job, never skips
    /// a step. Cancellation (shutdown) ends it; the job resumes after restart.
    private func call<Command: WireCommand>(_ command: Command, idempotencyKey: String) async throws -> Command.Reply {
        var attempt = 0
        while true {
            do {
                return try await bus.send(command, idempotencyKey: idempotencyKey, within: settings.requestTimeout)
            } catch {
                if case .refused(let refusal) = error, refusal.code != .unavailable { throw Refused(error: refusal) }
                attempt += 1
                if attempt == 1 || attempt % 10 == 0 {
                    logger.warning(
                        "expiry request not answered yet, retrying",
                        metadata: ["command": "\(Command.name)", "attempt": "\(attempt)", "error": "\(error)"])
                }
                try await Task.sleep(for: .milliseconds(min(5000, 250 * attempt)))
            }
        }
    }
}
