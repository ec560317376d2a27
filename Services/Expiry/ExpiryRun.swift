import Foundation
import GeoChatDomain
import GeoChatKafka
import GeoChatRuntime
import Logging

/// One expiry run: ask the rooms service for rooms idle since the cutoff, in
/// batches, and have each removed. The rooms service checks idleness again
/// inside its removal, so a room visited meanwhile survives, and removing a
/// room twice is a no-op.
struct ExpiryRun: Sendable {
    let rooms: RequestClient
    let jobs: ExpiryJobs
    let idleLimit: Duration
    let batchSize: Int
    let logger: Logger

    func run(trigger: String) async throws {
        let idleBefore = Date().addingTimeInterval(-Double(idleLimit.components.seconds))
        let ran = try await jobs.exclusively {
            let job = try await jobs.begin(trigger: trigger, idleBefore: idleBefore)
            var report = ExpiryJobs.Report()
            do {
                try await removeIdleRooms(before: idleBefore, report: &report)
                try await jobs.finish(job, report: report, status: "finished", error: nil)
                if report.examined > 0 {
                    logger.info(
                        "expiry run finished",
                        metadata: ["job": "\(job)", "examined": "\(report.examined)", "removed": "\(report.removed)", "failed": "\(report.failed)"])
                }
            } catch {
                try? await jobs.finish(job, report: report, status: "failed", error: "\(error)")
                throw error
            }
        }
        if !ran { logger.debug("another instance is running expiry; skipped") }
    }

    private func removeIdleRooms(before: Date, report: inout ExpiryJobs.Report) async throws {
        let cutoff = Int64(before.timeIntervalSince1970 * 1000)
        var failedRooms = Set<RoomID>()
        while true {
            let reply = try await rooms.request(
                RoomsCommand.idleRooms(idleBeforeMs: cutoff, limit: batchSize + failedRooms.count),
                topic: Topics.roomsCommands, key: "expiry", idempotencyKey: "expiry-scan-\(UUID())", timeout: .seconds(10))
            guard case .roomIDs(let all) = reply else { throw RequestError.unexpectedReply("\(reply)") }
            let batch = all.filter { !failedRooms.contains($0) }
            if batch.isEmpty { return }
            for room in batch {
                report.examined += 1
                do {
                    let answer = try await rooms.request(
                        RoomsCommand.removeIdle(room: room, idleBeforeMs: cutoff), topic: Topics.roomsCommands,
                        key: String(room), idempotencyKey: "expire-\(room)-\(cutoff)", timeout: .seconds(10))
                    if case .removed(true) = answer { report.removed += 1 }
                } catch {
                    report.failed += 1
                    failedRooms.insert(room)
                    logger.warning("room not expired", metadata: ["room": "\(room)", "error": "\(error)"])
                }
            }
        }
    }
}
