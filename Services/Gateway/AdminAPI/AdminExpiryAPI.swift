import GatewayCore
import GeoChatAdminAPI
import GeoChatDomain
import Hummingbird

/// Expiry runs: start one (dry or real), read one's progress and report, list
/// the latest. The expiry service owns the jobs (ExpiryCommand).
extension AdminEndpoints {
    func startExpiryRun(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let body = try await AdminJSON.body(AdminAPI.ExpiryRunRequest.self, of: call.request)
        let idleRange = SettingsCatalog.definition(.roomIdleLimit).range
        if let idle = body.idleSeconds, !idleRange.contains(idle) {
            throw .badRequest("'idleSeconds' must be from \(idleRange.lowerBound) to \(idleRange.upperBound)")
        }
        let detail =
            (body.dryRun ? "dry run" : "real run")
            + (body.idleSeconds.map { ", idle \(DurationText.format($0))" } ?? "")
        let job: ExpiryJobReport
        do {
            job = try await backend.send(
                StartExpiryRun(dryRun: body.dryRun, idleLimitSeconds: body.idleSeconds, requestedBy: call.name))
        } catch {
            await backend.audit(call.name, "expiry-run", "expiry", "failed", "\(detail): \(error.message)")
            throw error
        }
        // One run at a time: the expiry service answers the run under way when there is one.
        let ours = job.trigger == call.name || job.trigger.hasSuffix(":" + call.name)
        guard ours, job.dryRun == body.dryRun else {
            await backend.audit(
                call.name, "expiry-run", "job \(job.id)", "refused", "\(detail): job \(job.id) under way")
            return AdminJSON.response(AdminAPI.RunUnderWayResponse(job: job), status: .conflict)
        }
        await backend.audit(call.name, "expiry-run", "job \(job.id)", "ok", detail)
        return AdminJSON.response(AdminAPI.JobResponse(job: job), status: .accepted)
    }

    func expiryRun(_ call: AdminCall) async throws(AdminFailure) -> Response {
        guard let raw = call.parameter("job"), let id = Int64(raw), id > 0 else {
            throw .badRequest("the job id must be a positive integer")
        }
        let job = try await backend.send(ReadExpiryJob(id: id))
        return AdminJSON.response(AdminAPI.JobResponse(job: job))
    }

    func expiryRuns(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let limit = try AdminJSON.int(call.request, "limit", default: 20, range: 1...1000)
        let jobs = try await backend.send(ListExpiryJobs(limit: limit))
        return AdminJSON.response(AdminAPI.JobsResponse(jobs: jobs))
    }
}
