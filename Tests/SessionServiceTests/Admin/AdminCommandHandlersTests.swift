import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatTestSupport
import HummingbirdBcrypt
import Logging
import Testing

@testable import SessionService

/// Administration's command handlers on the session service's store in a
/// scratch PostgreSQL database, commands through the in-memory bus, the state
/// topics' events recorded.
@Suite(.enabled(if: ScratchDatabase.port != nil || ScratchDatabase.isRequired))
struct AdminCommandHandlersTests {
    struct Fixture {
        let store: AdminStore
        let sessions: PostgresSessionStore
        let events: RecordedEvents
        let bus: InMemoryCommandBus
        let seal: LoginSeal

        /// A login as a gateway sends it: the token minted here, the password sealed.
        func login(_ name: String, _ password: String, seal other: LoginSeal? = nil) -> (command: LogIn, token: String)
        {
            let token = BearerToken.generate()
            let hash = BearerToken.hash(token)!
            let sealed = (other ?? seal).seal(password, name: name, tokenHash: hash)
            return (LogIn(name: name, sealedPassword: sealed, tokenHash: hash), token)
        }

        func send<Command: WireCommand>(_ command: Command) async throws(RequestError) -> Command.Reply {
            try await bus.send(command, within: TestPatience.deadline)
        }

        func audit(_ action: String) async throws -> [AuditEntry] {
            try await store.auditLog(limit: 100).filter { $0.action == action }
        }
    }

    static func withAdmin(_ body: @Sendable (Fixture) async throws -> Void) async throws {
        try await ScratchDatabase.with { database in
            let sessions = PostgresSessionStore(database: database)
            try await sessions.migrate()
            let store = AdminStore(database: database)
            _ = try await store.saveAdmin(
                AdminName("root")!, passwordHash: Bcrypt.hash("correct horse", cost: 4), replace: false)
            let events = RecordedEvents()
            let seal = Self.randomSeal()
            let handlers = AdminCommandHandlers(
                store: store,
                state: StateBroadcaster(
                    store: store, events: events, stateRecordCount: { 0 }, logger: Logger(label: "t")),
                tokenLifetimeSeconds: 600, loginFailureLimit: 3, decoyHash: Bcrypt.hash("decoy", cost: 4),
                loginSeal: seal, logger: Logger(label: "test"))
            try handlers.handlers.requireEvery()  // as the service checks at start
            try await body(
                Fixture(
                    store: store, sessions: sessions, events: events, bus: InMemoryCommandBus([handlers.handlers]),
                    seal: seal))
        }
    }

    static func randomSeal() -> LoginSeal {
        LoginSeal(base64: Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString())!
    }

    @Test func aLoginMakesTheGatewaysTokenAuthenticateUntilLogout() async throws {
        try await Self.withAdmin { admin in
            let (command, token) = admin.login("root", "correct horse")
            guard case .granted(let login) = try await admin.send(command) else {
                Issue.record("login refused")
                return
            }
            #expect(login.name == "root")
            let hash = try #require(BearerToken.hash(token))
            guard case .granted(let identity) = try await admin.send(Authenticate(tokenHash: hash)) else {
                Issue.record("token refused")
                return
            }
            #expect(identity.name == "root")
            _ = try await admin.send(LogOut(tokenHash: hash, admin: "root"))
            guard case .refused = try await admin.send(Authenticate(tokenHash: hash)) else {
                Issue.record("a revoked token still authenticates")
                return
            }
            #expect(try await admin.audit("login").map(\.outcome) == ["ok"])
            #expect(try await admin.audit("logout").map(\.outcome) == ["ok"])
        }
    }

    @Test func wrongPasswordsAreRefusedAuditedAndThrottled() async throws {
        try await Self.withAdmin { admin in
            for name in ["root", "root", "nobody"] {
                guard case .refused = try await admin.send(admin.login(name, "wrong").command) else {
                    Issue.record("a wrong password was accepted")
                    return
                }
            }
            _ = try await admin.send(admin.login("root", "wrong").command)
            // Three failures of one name: even the right password is throttled now.
            await #expect(throws: RequestError.self) {
                try await admin.send(admin.login("root", "correct horse").command)
            }
            let outcomes = try await admin.audit("login").map(\.outcome)
            #expect(outcomes.filter { $0 == "denied" }.count == 4)
            #expect(outcomes.contains("throttled"))
        }
    }

    /// What a reader of the admin topic could try: a password sealed under
    /// another key, or a sealed password moved into a login for its own token.
    @Test func aSealThisServiceCannotOpenGrantsNothing() async throws {
        try await Self.withAdmin { admin in
            let foreign = admin.login("root", "correct horse", seal: Self.randomSeal())
            guard case .refused = try await admin.send(foreign.command) else {
                Issue.record("a password sealed with another key was accepted")
                return
            }
            let genuine = admin.login("root", "correct horse").command
            let stolen = admin.login("root", "anything")
            let moved = LogIn(name: "root", sealedPassword: genuine.sealedPassword, tokenHash: stolen.command.tokenHash)
            guard case .refused = try await admin.send(moved) else {
                Issue.record("a sealed password was accepted for another token")
                return
            }
            guard case .refused = try await admin.send(Authenticate(tokenHash: stolen.command.tokenHash)) else {
                Issue.record("the attacker's token works")
                return
            }
            #expect(try await admin.audit("login").map(\.outcome) == ["denied", "denied"])
            #expect(!genuine.sealedPassword.contains("correct horse"))
        }
    }

    @Test func aNameWithControlCharactersIsRefusedAndAuditedEscaped() async throws {
        try await Self.withAdmin { admin in
            let attack = "root\u{1B}]0;owned\u{07}\nlevel=info msg=forged"
            guard case .refused = try await admin.send(admin.login(attack, "correct horse").command) else {
                Issue.record("an invalid name was accepted")
                return
            }
            let rows = try await admin.audit("login")
            #expect(rows.map(\.actor) == [AdminCommandHandlers.invalidName])
            let detail = try #require(rows.first?.detail)
            #expect(!ControlCharacters.contains(in: detail), "\(detail)")
            #expect(detail.contains("\\u{1B}]0;owned\\u{7}\\nlevel=info"))
        }
    }

    @Test func bansArePublishedAuditedAndLifted() async throws {
        try await Self.withAdmin { admin in
            let target = try #require(BanTarget(kind: .nick, value: "Mallory"))
            let ban = try await admin.send(PlaceBan(target, reason: "spam", by: "root"))
            #expect(ban.active && ban.reason == "spam")
            #expect(try await admin.send(ListBans()).map(\.target) == [target])
            let lifted = try await admin.send(LiftBan(target, by: "root"))
            #expect(!lifted.active && lifted.version > ban.version)
            #expect(admin.events.published(Ban.self).map(\.active) == [true, false])
            await #expect(throws: RequestError.self) { try await admin.send(LiftBan(target, by: "root")) }
            #expect(try await admin.audit("unban").map(\.outcome).sorted() == ["ok", "refused"])
            await #expect(throws: RequestError.self) {
                try await admin.send(PlaceBan(target, reason: String(repeating: "r", count: 201), by: "root"))
            }
            #expect(admin.events.published(Ban.self).count == 2)
        }
    }

    @Test func settingsChangeAllOrNothing() async throws {
        try await Self.withAdmin { admin in
            let changed = try await admin.send(ChangeSettings(["room.cap": 200], by: "root"))
            #expect(changed.first { $0.name == "room.cap" }?.value == 200)
            #expect(admin.events.published(SettingValue.self).map(\.name) == ["room.cap"])
            await #expect(throws: RequestError.self) {
                try await admin.send(ChangeSettings(["room.cap": 300, "no.such.setting": 1], by: "root"))
            }
            #expect(try await admin.send(ReadSettings()).first { $0.name == "room.cap" }?.value == 200)
            #expect(admin.events.published(SettingValue.self).count == 1)
            #expect(try await admin.audit("settings").map(\.outcome).sorted() == ["ok", "refused"])
        }
    }

    @Test func theSessionListFiltersByNickPrefixAndTheAuditNamesTheGateway() async throws {
        try await Self.withAdmin { admin in
            _ = try await admin.sessions.start(nick: Nickname("Alice")!, key: "a")
            _ = try await admin.sessions.start(nick: Nickname("Bob")!, key: "b")
            #expect(try await admin.send(ListLiveSessions(nick: "al", limit: 10)).map(\.nick) == ["Alice"])
            await #expect(throws: RequestError.self) { try await admin.send(ListLiveSessions(nick: "a-b", limit: 10)) }
            let recorded = try await admin.send(
                RecordAudit(
                    AuditEntry(actor: "root", action: "remove-room", target: "room 7", outcome: "ok", gateway: "forged")
                ))
            #expect(recorded.gateway == "memory", "the requester, not what the command claims")
            #expect(try await admin.send(ReadAuditLog(limit: 1)).map(\.action) == ["remove-room"])
        }
    }
}

/// A login flood costs one password check at a time per instance, and a
/// throttled name writes one audit row a minute.
@Suite struct LoginFloodTests {
    @Test func passwordChecksBeyondTheQueueAreRefusedAtOnce() async throws {
        let checks = PasswordChecks(concurrent: 1, waiting: 2)
        let gate = AsyncGate()
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    do {
                        _ = try await checks.verify("p", hash: "h") { _, _ in
                            gate.wait()
                            return true
                        }
                        return "checked"
                    } catch { return "refused" }
                }
            }
            try? await Task.sleep(for: .milliseconds(300))
            gate.open()
            var all: [String] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.filter { $0 == "checked" }.count == 3, "one running, two queued: \(outcomes)")
        #expect(outcomes.filter { $0 == "refused" }.count == 3)
        #expect(checks.inUse == 0)
    }

    @Test func aThrottledNameIsAuditedOnceAWindow() {
        let summaries = ThrottleSummaries(windowMs: 60_000)
        #expect(summaries.due("root", nowMs: 0) == 0)
        for t in 1...50 { #expect(summaries.due("root", nowMs: Int64(t) * 1000) == nil) }
        #expect(summaries.due("other", nowMs: 1000) == 0, "per name")
        #expect(summaries.due("root", nowMs: 61_000) == 50, "the next row tells how many were held back")
    }
}

/// Blocks bcrypt stand-ins until opened (on the global queue, as checks run).
final class AsyncGate: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var opened = false

    func wait() {
        lock.lock()
        let isOpen = opened
        lock.unlock()
        if isOpen { return }
        semaphore.wait()
        semaphore.signal()
    }

    func open() {
        lock.lock()
        opened = true
        lock.unlock()
        semaphore.signal()
    }
}
