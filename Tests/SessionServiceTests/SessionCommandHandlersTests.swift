import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import Logging
import Testing

@testable import SessionService

/// The session service's command handlers over an in-memory store and event
/// log, each command sent through the in-memory bus (the same envelopes,
/// handler lookup and error mapping as over Kafka).
@Suite struct SessionCommandHandlersTests {
    let clock = TestClock(nowMs: 1_000_000)
    let store: InMemorySessionStore
    let events = RecordedEvents()
    let relay: OutboxRelay<StagedEvent>
    let bus: InMemoryCommandBus

    init() {
        store = InMemorySessionStore(now: clock.read)
        relay = OutboxRelay(outbox: store.outbox, events: events, logger: Logger(label: "test"), grace: .zero)
        bus = InMemoryCommandBus([
            SessionCommandHandlers(store: store, outbox: relay, logger: Logger(label: "test")).handlers
        ])
    }

    /// The service starts only with a handler for every session command (`WireCommands`).
    @Test func everySessionCommandHasAHandler() throws {
        try SessionCommandHandlers(store: store, outbox: relay, logger: Logger(label: "test")).handlers.requireEvery()
    }

    func send<Command: WireCommand>(_ command: Command, key: String = IdempotencyKey.random())
        async throws(RequestError)
        -> Command.Reply
    {
        try await bus.send(command, idempotencyKey: key, within: TestPatience.deadline)
    }

    /// A `start` and a `rename` as a foreign or buggy requester could put them on the wire: the nick unchecked.
    struct UncheckedStart: SessionWireCommand {
        typealias Reply = SessionInfo
        static let name = StartSession.name
        var nick: String
        var partitionKey: String? { nil }
    }

    struct UncheckedRename: SessionWireCommand {
        typealias Reply = SessionInfo
        static let name = RenameSession.name
        var session: SessionID
        var nick: String
        var partitionKey: String? { session.value }
    }

    @Test func startMakesASessionAndAnnouncesIt() async throws {
        let session = try await send(StartSession(nick: Nickname("Lydia")!))
        #expect(session.nick == "Lydia")
        #expect(session.version == 1)
        #expect(!session.ended)
        let started = events.published(SessionEvent.self)
        #expect(started.count == 1)
        #expect(started.first?.session == session)
        #expect(try await store.find(session.id) == session)
    }

    @Test func aStartRetriedWithItsKeyIsOneSessionAndOneEvent() async throws {
        let first = try await send(StartSession(nick: Nickname("Twice")!), key: "start-1")
        let again = try await send(StartSession(nick: Nickname("Twice")!), key: "start-1")
        #expect(first.id == again.id)
        #expect(events.published(SessionEvent.self).count == 1)
    }

    @Test(arguments: ["", "1abc", "a b", String(repeating: "x", count: 33)])
    func aBadNicknameIsRefusedAndChangesNothing(_ nick: String) async throws {
        #expect(Nickname(nick) == nil)
        // On the wire: the nickname's rule is checked as the command is decoded, and its error is the answer.
        await #expect(throws: RequestError.refused(.invalidNick)) { try await send(UncheckedStart(nick: nick)) }
        #expect(events.count == 0)
    }

    @Test func lookupAnswersTheStoredSessionOrInvalidSession() async throws {
        let session = try await send(StartSession(nick: Nickname("Ann")!))
        #expect(try await send(LookupSession(session: session.id)) == session)
        await #expect(throws: RequestError.refused(.invalidSession)) {
            try await send(LookupSession(session: .random()))
        }
    }

    @Test func renameRaisesTheVersionAndAnnouncesIt() async throws {
        let session = try await send(StartSession(nick: Nickname("Old")!))
        let renamed = try await send(RenameSession(session: session.id, nick: Nickname("New")!))
        #expect(renamed.nick == "New")
        #expect(renamed.version == session.version + 1)
        guard case .renamed(let announced) = events.published(SessionEvent.self).last else {
            Issue.record("no renamed event")
            return
        }
        #expect(announced == renamed)
        await #expect(throws: RequestError.refused(.invalidNick)) {
            try await send(UncheckedRename(session: session.id, nick: "9bad"))
        }
        #expect(try await store.find(session.id)?.nick == "New")
    }

    @Test func endEndsOnceAndARetryWithItsKeyAnswersTheSame() async throws {
        let session = try await send(StartSession(nick: Nickname("Bye")!))
        let ended = try await send(EndSession(session: session.id), key: "end-1")
        #expect(ended.ended)
        #expect(ended.version == session.version + 1)
        guard case .ended(_, let reason) = events.published(SessionEvent.self).last else {
            Issue.record("no ended event")
            return
        }
        #expect(reason == "end")
        #expect(try await send(EndSession(session: session.id), key: "end-1") == ended)
        #expect(events.published(SessionEvent.self).count == 2, "started and ended: a repeat announces nothing")
        await #expect(throws: RequestError.refused(.invalidSession)) {
            try await send(EndSession(session: session.id), key: "end-2")
        }
        await #expect(throws: RequestError.refused(.invalidSession)) {
            try await send(RenameSession(session: session.id, nick: Nickname("Back")!))
        }
    }

    @Test func aChangeWhoseEventTheBrokerRefusedIsAnsweredAndRelayedLater() async throws {
        events.refuse(true)
        let session = try await send(StartSession(nick: Nickname("Patient")!))
        let renamed = try await send(RenameSession(session: session.id, nick: Nickname("Waiting")!))
        #expect(events.count == 0)
        #expect(store.events.pending.count == 2, "committed with the change, kept for the relay")
        #expect(
            try await relay.pass() == .relayed(published: 0, failed: 2, backlog: 2), "a lane stops at its first refusal"
        )
        events.refuse(false)
        #expect(try await relay.pass() == .relayed(published: 2, failed: 0, backlog: 0))
        #expect(
            events.published(SessionEvent.self) == [.started(session), .renamed(renamed)], "in the order of the changes"
        )
        #expect(try await relay.pass() == .relayed(published: 0, failed: 0, backlog: 0))
    }

    @Test func eventsTheBrokerTookLeaveTheOutboxAtTheNextPass() async throws {
        _ = try await send(StartSession(nick: Nickname("Quick")!))
        #expect(store.events.pending.count == 1)
        #expect(relay.acknowledgedCount == 1)
        #expect(try await relay.pass() == .relayed(published: 0, failed: 0, backlog: 0), "deleted, not published again")
        #expect(events.count == 1)
    }

    @Test func aCommandPastItsDeadlineIsNotCarriedOut() async throws {
        await #expect(throws: RequestError.timedOut) {
            try await bus.send(
                StartSession(nick: Nickname("Late")!), idempotencyKey: "late", deadline: .after(.milliseconds(-1)))
        }
        #expect(events.count == 0)
    }
}

/// Session idle expiry: sessions silent for longer than the lifetime end with
/// reason `idle`; a sign of life keeps a session.
@Suite struct SessionIdleExpiryTests {
    @Test func silentSessionsEndAndSessionsSeenStay() async throws {
        let clock = TestClock(nowMs: 1_000_000)
        let store = InMemorySessionStore(now: clock.read)
        let events = RecordedEvents()
        let housekeeping = SessionHousekeeping(
            store: store, outbox: OutboxRelay(outbox: store.outbox, events: events, logger: Logger(label: "test")),
            lifetimeSeconds: { 60 }, logger: Logger(label: "test"))
        let silent = try await store.start(nick: Nickname("Silent")!, key: "a").value
        let active = try await store.start(nick: Nickname("Active")!, key: "b").value

        clock.advance(by: 50_000)
        await housekeeping.apply(PresenceBatch(gateway: "g1", seenAtMs: clock.read(), sessions: [active.id]))
        clock.advance(by: 20_000)  // silent: 70 s; active: seen 20 s ago
        await housekeeping.expireIdleSessions()

        let ended = events.published(SessionEvent.self).compactMap { event -> (SessionID, String)? in
            guard case .ended(let info, let reason) = event else { return nil }
            return (info.id, reason)
        }
        #expect(ended.map(\.0) == [silent.id])
        #expect(ended.map(\.1) == ["idle"])
        #expect(try await store.find(silent.id)?.ended == true)
        #expect(try await store.find(active.id)?.ended == false)

        clock.advance(by: 61_000)
        await housekeeping.expireIdleSessions()
        #expect(try await store.find(active.id)?.ended == true)
        #expect(events.published(SessionEvent.self).count == 2)
    }
}
