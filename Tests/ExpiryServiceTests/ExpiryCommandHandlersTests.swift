import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatRuntime
import GeoChatTestSupport
import Logging
import Synchronization
import Testing

@testable import ExpiryService

/// The expiry service's command handlers and a whole run, on its job store in a
/// scratch PostgreSQL database; the rooms and messaging services it drives are
/// handlers on the in-memory bus.
@Suite(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
struct ExpiryCommandHandlersTests {
    static let settings = try! ExpirySettings(
        Configuration(arguments: [], environment: ["GEOCHAT_EXPIRY_BATCH_SIZE": "2", "GEOCHAT_EXPIRY_PAGE_SIZE": "3"]))

    static func withHandlers(_ body: @Sendable (ExpiryJobStore, InMemoryCommandBus) async throws -> Void) async throws {
        try await ScratchDatabase.with { database in
            let jobs = ExpiryJobStore(database: database)
            try await jobs.migrate()
            let handlers = ExpiryCommandHandlers(jobs: jobs, settings: settings, logger: Logger(label: "test")).handlers
            try handlers.requireEvery()  // as the service checks at start
            let bus = InMemoryCommandBus([handlers])
            try await body(jobs, bus)
        }
    }

    @Test func aRunIsStartedOnceAndARetryAnswersTheSameJob() async throws {
        try await Self.withHandlers { _, bus in
            let job = try await bus.send(
                StartExpiryRun(dryRun: true, idleLimitSeconds: 86_400, requestedBy: " alice "), idempotencyKey: "run-1",
                within: TestPatience.deadline)
            #expect(job.trigger == "admin:alice" && job.dryRun && job.status == .running)
            let idleBefore = WallClock.nowMs() - 86_400_000
            #expect(abs(job.idleBeforeMs - idleBefore) < 10_000)
            let again = try await bus.send(
                StartExpiryRun(dryRun: true, idleLimitSeconds: 86_400, requestedBy: "alice"), idempotencyKey: "run-1",
                within: TestPatience.deadline)
            #expect(again.id == job.id)
            let other = try await bus.send(
                StartExpiryRun(dryRun: false, idleLimitSeconds: nil, requestedBy: "bob"), within: TestPatience.deadline)
            #expect(other.id == job.id, "one run at a time: the one under way is the answer")
            #expect(try await bus.send(ReadExpiryJob(id: job.id), within: TestPatience.deadline).id == job.id)
            #expect(try await bus.send(ListExpiryJobs(limit: 5), within: TestPatience.deadline).map(\.id) == [job.id])
        }
    }

    @Test func badRequestsAreRefusedAndStartNothing() async throws {
        try await Self.withHandlers { _, bus in
            for bad in [
                StartExpiryRun(dryRun: true, idleLimitSeconds: 1, requestedBy: "alice"),
                StartExpiryRun(dryRun: true, idleLimitSeconds: nil, requestedBy: "   "),
                StartExpiryRun(dryRun: true, idleLimitSeconds: nil, requestedBy: "bell\u{07}"),
            ] {
                await #expect(throws: RequestError.self) { try await bus.send(bad, within: TestPatience.deadline) }
            }
            let listed = try await bus.send(ListExpiryJobs(limit: 5), within: TestPatience.deadline)
            #expect(listed.isEmpty)
            await #expect(throws: RequestError.refused(ProtocolError(.noSuchChat, "no such expiry job"))) {
                try await bus.send(ReadExpiryJob(id: 404), within: TestPatience.deadline)
            }
        }
    }

    /// A real run: pages through the idle rooms, removes them in batches at the
    /// rooms service, then their messages at messaging, and reports the counts.
    @Test func aRunRemovesTheIdleRoomsInBatchesAndReports() async throws {
        try await Self.withHandlers { jobs, bus in
            // The owners check the seal as the real ones do: the run's removals must carry it.
            let operators = TestKeys.operatorSeal()
            let owners = FakeOwners(idle: (1...7).map(RoomID.init), visitedDuringRun: [4], seal: operators)
            bus.register(owners.rooms)
            bus.register(owners.messaging)
            let run = ExpiryRun(
                bus: bus, jobs: jobs, settings: Self.settings, operatorSeal: operators, logger: Logger(label: "test"))
            let started = try await bus.send(
                StartExpiryRun(dryRun: false, idleLimitSeconds: 86_400, requestedBy: "alice"),
                within: TestPatience.deadline)
            let job = try #require(try await jobs.running())
            try await run.execute(job)
            let report = try await bus.send(ReadExpiryJob(id: started.id), within: TestPatience.deadline)
            #expect(report.status == .finished)
            #expect(report.selected == 7 && report.examined == 7)
            #expect(report.removed == 6 && report.failed == 0)
            #expect(owners.removedRooms.sorted() == [1, 2, 3, 5, 6, 7], "room 4 was visited after the selection")
            #expect(owners.clearedMessages.sorted() == [1, 2, 3, 5, 6, 7])
            #expect(try await jobs.running() == nil)
        }
    }
}

/// The rooms and messaging services as a run sees them.
final class FakeOwners: Sendable {
    private let state: Mutex<(idle: [RoomID], removed: [RoomID], cleared: [RoomID])>
    private let visited: Set<RoomID>
    private let seal: OperatorSeal

    init(idle: [RoomID], visitedDuringRun: Set<RoomID>, seal: OperatorSeal) {
        state = Mutex((idle, [], []))
        visited = visitedDuringRun
        self.seal = seal
    }

    var removedRooms: [RoomID] { state.withLock { $0.removed } }
    var clearedMessages: [RoomID] { state.withLock { $0.cleared } }

    var rooms: CommandHandlers {
        var handlers = CommandHandlers(topic: Topics.roomsCommands)
        handlers.on(SelectIdleRooms.self) { [self] command, _ in
            state.withLock { Array($0.idle.filter { $0 > command.after }.prefix(command.limit)) }
        }
        handlers.on(RemoveIdleRooms.self, sealedWith: seal) { [self, visited] command, _ in
            state.withLock { state in
                let gone = command.rooms.filter { !visited.contains($0) && state.idle.contains($0) }
                state.idle.removeAll { gone.contains($0) }
                state.removed += gone
                return gone
            }
        }
        return handlers
    }

    var messaging: CommandHandlers {
        var handlers = CommandHandlers(topic: Topics.messagingCommands)
        handlers.on(RemoveRoomMessages.self, sealedWith: seal) { [self] command, _ in
            state.withLock { $0.cleared += command.rooms }
            return Done()
        }
        return handlers
    }
}
