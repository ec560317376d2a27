import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import Synchronization
import Testing

@testable import GatewayCore

/// A session this gateway has not met is asked of the session service once,
/// however many requests name it at the same moment.
@Suite struct SessionDirectoryTests {
    final class Counter: Sendable {
        let asked = Mutex(0)
    }

    @Test func requestsForOneUnknownIdAtOnceShareOneLookup() async throws {
        let counter = Counter()
        let known = SessionID.random()
        let guessed = SessionID.random()
        var session = CommandHandlers(topic: Topics.sessionCommands)
        session.on(LookupSession.self) { command, _ in
            counter.asked.withLock { $0 += 1 }
            try await Task.sleep(for: .milliseconds(50))  // the answer takes a while: the others arrive meanwhile
            guard command.session == known else { throw ProtocolError.invalidSession }
            return SessionInfo(id: known, nick: "Ann", version: 1)
        }
        let directory = SessionDirectory(
            backend: ServiceClients(bus: InMemoryCommandBus([session]), timeout: TestPatience.deadline))
        let nicks = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await directory.resolve(known).nick } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(nicks == Array(repeating: "Ann", count: 20))
        #expect(counter.asked.withLock { $0 } == 1, "one LookupSession for twenty requests")
        let refusals = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        _ = try await directory.resolve(guessed)
                        return false
                    } catch { return (error as? ProtocolError)?.code == .invalidSession }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(refusals == Array(repeating: true, count: 10))
        #expect(counter.asked.withLock { $0 } == 2, "one for the unknown id; then it is remembered")
        await #expect(throws: ProtocolError.self) { try await directory.resolve(guessed) }
        #expect(counter.asked.withLock { $0 } == 2)
        #expect(directory.liveness(known) == .live)
    }
}
