import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import Logging
import Testing

@testable import Gateway
@testable import GatewayCore

/// The admin API's side of the expiry contract: run requests leave as the
/// expiry service's wire commands, through the same envelopes and handler
/// lookup as over Kafka, and the typed reports come back. The real expiry
/// service answers the same contract in Tests/Integration/test_admin_expiry.py.
@Suite struct AdminExpiryWiringTests {
    let bus: InMemoryCommandBus
    let backend: AdminBackend

    init() {
        var expiry = CommandHandlers(topic: Topics.expiryCommands)
        expiry.on(StartExpiryRun.self) { command, _ in
            ExpiryJobReport(
                id: 41, trigger: "admin:" + command.requestedBy, dryRun: command.dryRun, status: .running,
                idleBeforeMs: Int64(command.idleLimitSeconds ?? -1), startedAtMs: 1)
        }
        expiry.on(ReadExpiryJob.self) { command, _ in
            guard command.id != 404 else { throw ProtocolError(.noSuchChat, "no such expiry job") }
            return ExpiryJobReport(
                id: command.id, trigger: "schedule", dryRun: false, status: .finished, idleBeforeMs: 0, startedAtMs: 1,
                finishedAtMs: 2, selected: 3, examined: 3, removed: 2, failed: 1)
        }
        expiry.on(ListExpiryJobs.self) { command, _ in
            (0..<Int64(command.limit)).map {
                ExpiryJobReport(
                    id: $0, trigger: "schedule", dryRun: false, status: .finished, idleBeforeMs: 0, startedAtMs: 1)
            }
        }
        bus = InMemoryCommandBus([expiry])
        backend = AdminBackend(
            services: ServiceClients(bus: bus, timeout: TestPatience.deadline), gateway: "test",
            logger: Logger(label: "test"))
    }

    @Test func aRunRequestCarriesItsParametersAndComesBackAsTheJob() async throws {
        let job = try await backend.send(StartExpiryRun(dryRun: true, idleLimitSeconds: 604_800, requestedBy: "alice"))
        #expect(job.trigger == "admin:alice")
        #expect(job.dryRun)
        #expect(job.idleBeforeMs == 604_800)
        #expect(bus.sentCommands.map(\.name) == ["startRun"])
        #expect(bus.sentCommands.map(\.key) == ["expiry"])
    }

    @Test func reportsAndListsComeBackTyped() async throws {
        let report = try await backend.send(ReadExpiryJob(id: 17))
        #expect([report.id, Int64(report.removed), Int64(report.failed)] == [17, 2, 1])
        let jobs = try await backend.send(ListExpiryJobs(limit: 3))
        #expect(jobs.map(\.id) == [0, 1, 2])
    }

    @Test func aRefusalBecomesTheAdminAPIsNotFound() async throws {
        await #expect(throws: AdminFailure.self) { try await backend.send(ReadExpiryJob(id: 404)) }
        do {
            _ = try await backend.send(ReadExpiryJob(id: 404))
        } catch {
            #expect(error.status == .notFound)
        }
    }
}
