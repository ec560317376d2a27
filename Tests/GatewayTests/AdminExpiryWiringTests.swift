import Foundation
import GeoChatDomain
import GeoChatKafka
import Logging
import XCTest

@testable import Gateway

/// The admin API's side of the expiry contract over a real broker: run
/// requests leave as `ExpiryCommand` on `geochat.expiry.commands` and the
/// owner's `.expiryJob` / `.expiryJobs` answers come back decoded. The owner
/// here is the test (it checks what arrives); the real expiry service answers
/// the same contract in Tests/Integration/test_admin_expiry.py.
final class AdminExpiryWiringTests: XCTestCase {
    func testRunRequestsTravelAsTheExpiryContractAndReportsComeBack() async throws {
        guard let brokers = ProcessInfo.processInfo.environment["GEOCHAT_TEST_KAFKA_BROKERS"] else {
            if ProcessInfo.processInfo.environment["CI"] != nil { XCTFail("GEOCHAT_TEST_KAFKA_BROKERS is not set") }
            throw XCTSkip("GEOCHAT_TEST_KAFKA_BROKERS is not set")
        }
        let logger = Logger(label: "admin-expiry-wiring")
        let settings = KafkaSettings(
            brokers: brokers, clientID: "test-\(UUID().uuidString.prefix(8))", partitions: 4, sessionTimeoutMs: 2000)
        let producer = try KafkaProducer(settings: settings, logger: logger)
        defer { producer.close() }
        try await TopicProvisioner(producer: producer, settings: settings, logger: logger).ensureRetrying([Topics.expiryCommands])
        let requests = try RequestClient(instance: "test-\(UUID().uuidString.prefix(8))", settings: settings, producer: producer, logger: logger)
        let requestsTask = Task { try await requests.run() }
        let owner = try KafkaConsumer(
            settings: settings, topics: [Topics.expiryCommands], mode: .group("test-expiry-\(UUID())"), pace: .interactive,
            logger: logger)
        try await owner.start()
        let ownerTask = Task {
            await CommandProcessor<ExpiryCommand>(consumer: owner, producer: producer, logger: logger) { envelope in
                switch envelope.command {
                case .startRun(let dryRun, let idle, let by):
                    return .success(.expiryJob(ExpiryJobReport(
                        id: 41, trigger: "admin:" + by, dryRun: dryRun, status: "running",
                        idleBeforeMs: Int64(idle ?? -1), startedAtMs: 1)))
                case .job(let id):
                    return .success(.expiryJob(ExpiryJobReport(
                        id: id, trigger: "schedule", dryRun: false, status: "finished", idleBeforeMs: 0, startedAtMs: 1,
                        finishedAtMs: 2, selected: 3, examined: 3, removed: 2, failed: 1)))
                case .jobs(let limit):
                    return .success(.expiryJobs((0..<Int64(limit)).map {
                        ExpiryJobReport(id: $0, trigger: "schedule", dryRun: false, status: "finished", idleBeforeMs: 0, startedAtMs: 1)
                    }))
                }
            }.run()
        }
        for _ in 0..<100 where !requests.isReady { try await Task.sleep(for: .milliseconds(100)) }
        let backend = AdminBackend(
            services: ServiceClients(requests: requests, timeout: .seconds(2)), gateway: "test", logger: logger)

        // The group's first assignment takes a moment: retry the first request.
        var started: ReplyBody?
        for _ in 0..<10 where started == nil {
            started = try? await backend.expiry(.startRun(dryRun: true, idleLimitSeconds: 604_800, requestedBy: "alice"))
        }
        guard case .expiryJob(let job)? = started else { return XCTFail("no answer: \(String(describing: started))") }
        XCTAssertEqual(job.trigger, "admin:alice")
        XCTAssertTrue(job.dryRun)
        XCTAssertEqual(job.idleBeforeMs, 604_800)

        guard case .expiryJob(let report) = try await backend.expiry(.job(id: 17)) else { return XCTFail("not a job") }
        XCTAssertEqual([report.id, Int64(report.removed), Int64(report.failed)], [17, 2, 1])
        guard case .expiryJobs(let jobs) = try await backend.expiry(.jobs(limit: 3)) else { return XCTFail("not jobs") }
        XCTAssertEqual(jobs.map(\.id), [0, 1, 2])

        ownerTask.cancel()
        requestsTask.cancel()
        await owner.close()
        await requests.shutdown()
    }
}
