import GeoChatDomain
import Testing

@testable import GeoChatBus

/// A service's handlers are held to `WireCommands`: one missing is named, and
/// `requireEvery` (what `ServiceHost.handles` runs at start) refuses them.
@Suite struct CommandHandlersTests {
    @Test func aCommandWithoutAHandlerIsNamedAndRefusedAtStart() throws {
        var handlers = CommandHandlers(topic: Topics.expiryCommands)
        handlers.on(ListExpiryJobs.self) { _, _ in [] }
        #expect(Set(handlers.unhandled) == [StartExpiryRun.name, ReadExpiryJob.name])
        #expect(throws: UnhandledCommands(topic: Topics.expiryCommands, commands: handlers.unhandled)) {
            try handlers.requireEvery()
        }
        handlers.on(StartExpiryRun.self) { _, _ in throw ProtocolError.unavailable }
        handlers.on(ReadExpiryJob.self) { _, _ in throw ProtocolError.unavailable }
        #expect(handlers.unhandled.isEmpty)
        try handlers.requireEvery()
    }
}
