import Foundation
import GeoChatBus
import GeoChatDomain
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

@testable import Gateway
@testable import GatewayCore

/// The operators' listener over the in-memory cluster of `GatewayRouterTests`
/// (the session, rooms and messaging services' real handlers), with stand-ins
/// for what needs PostgreSQL or a running expiry service: the session
/// service's admin commands and the expiry service's runs (`AdminStandIn`).
/// One admin, `alice`.
struct AdminRouterFixture: Sendable {
    static let name = "alice"
    static let password = "a long pass phrase"

    let cluster: GatewayRouterTests
    let standIn: AdminStandIn

    init() throws {
        cluster = try GatewayRouterTests()
        let bus = try #require(cluster.gateway.services.bus as? InMemoryCommandBus)
        let keys = try #require(cluster.gateway.adminKeys)
        standIn = AdminStandIn(seal: keys.login)
        bus.register(standIn.adminHandlers)
        bus.register(standIn.expiryHandlers)
    }

    /// `<prefix>/admin`: where the admin API's paths start.
    var base: String { cluster.gateway.settings.pathPrefix + "/admin" }

    var application: some ApplicationProtocol {
        cluster.gateway.buildAdminApplication(health: cluster.health, port: 0)
    }

    /// Logs `alice` in, as `geochat-admin login` does: her bearer token.
    func login(_ client: some TestClientProtocol) async throws -> String {
        let body = #"{"name":"\#(Self.name)","password":"\#(Self.password)"}"#
        let (status, answer) = try await client.execute(
            uri: base + "/login", method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(string: body)
        ) { response in (response.status, Data(buffer: response.body)) }
        #expect(status == .ok, "\(String(decoding: answer, as: UTF8.self))")
        return try JSONDecoder().decode(AdminLogin.self, from: answer).token
    }
}

/// The session service's admin commands (accounts, tokens, bans, settings, the
/// audit log) and the expiry service's runs, kept in memory. The real ones, on
/// PostgreSQL, are tested in `AdminCommandHandlersTests`, ExpiryServiceTests and
/// Tests/Integration/test_admin.py; these answer as they do, without the checks
/// those tests cover (lifting a ban that is not in force, for one, is answered).
final class AdminStandIn: Sendable {
    private struct State {
        var tokenHashes: Set<String> = []
        var audit: [AuditEntry] = []
        var bans: [String: Ban] = [:]
        var settings: [String: SettingValue] = [:]
        var version: Int64 = 0

        mutating func next() -> Int64 {
            version += 1
            return version
        }
    }

    private let state = Mutex(State())
    private let seal: LoginSeal
    /// The one expiry job there is.
    static let job: Int64 = 41

    init(seal: LoginSeal) { self.seal = seal }

    /// The audit rows recorded so far, oldest first.
    var auditLog: [AuditEntry] { state.withLock { $0.audit } }

    private var identity: AdminIdentity {
        AdminIdentity(name: AdminRouterFixture.name, expiresAtMs: WallClock.nowMs() + 12 * 3_600_000)
    }

    var adminHandlers: CommandHandlers {
        var handlers = CommandHandlers(topic: Topics.adminCommands)
        handlers.on(LogIn.self) { [self] command, _ in
            guard command.name == AdminRouterFixture.name,
                seal.open(command.sealedPassword, name: command.name, tokenHash: command.tokenHash)
                    == AdminRouterFixture.password
            else { return .refused("wrong name or password") }
            state.withLock { _ = $0.tokenHashes.insert(command.tokenHash) }
            return .granted(identity)
        }
        handlers.on(Authenticate.self) { [self] command, _ in
            state.withLock { $0.tokenHashes.contains(command.tokenHash) }
                ? .granted(identity) : .refused("the token is unknown, expired or revoked")
        }
        handlers.on(LogOut.self) { [self] command, _ in
            state.withLock { _ = $0.tokenHashes.remove(command.tokenHash) }
            return AdminIdentity(name: command.admin, expiresAtMs: WallClock.nowMs())
        }
        handlers.on(ListLiveSessions.self) { _, _ in
            [AdminSession(id: SessionID.random().value, nick: "Lydia", createdAtMs: 1, lastSeenAtMs: 2)]
        }
        handlers.on(ListBans.self) { [self] _, _ in state.withLock { $0.bans.values.filter(\.active) } }
        handlers.on(PlaceBan.self) { [self] command, _ in
            state.withLock { state in
                let ban = Ban(
                    target: command.target, active: true, reason: command.reason, by: command.by,
                    atMs: WallClock.nowMs(), version: state.next())
                state.bans[command.target.key] = ban
                return ban
            }
        }
        handlers.on(LiftBan.self) { [self] command, _ in
            state.withLock { state in
                let ban = Ban(
                    target: command.target, active: false, reason: state.bans[command.target.key]?.reason ?? "",
                    by: command.by, atMs: WallClock.nowMs(), version: state.next())
                state.bans[command.target.key] = ban
                return ban
            }
        }
        handlers.on(ReadSettings.self) { [self] _, _ in state.withLock { Array($0.settings.values) } }
        handlers.on(ChangeSettings.self) { [self] command, _ in
            let checked = try SettingsCatalog.validate(command.changes)
            return state.withLock { state in
                for (name, value) in checked {
                    state.settings[name.rawValue] = SettingValue(
                        name: name.rawValue, value: value, version: state.next(), updatedBy: command.by,
                        updatedAtMs: WallClock.nowMs())
                }
                return Array(state.settings.values)
            }
        }
        handlers.on(RecordAudit.self) { [self] command, context in
            state.withLock { state in
                var entry = command.entry
                entry.id = Int64(state.audit.count + 1)
                entry.atMs = WallClock.nowMs()
                entry.gateway = context.requester
                state.audit.append(entry)
                return entry
            }
        }
        handlers.on(ReadAuditLog.self) { [self] command, _ in
            let query = command.query ?? AuditQuery()
            return state.withLock { state in
                Array(
                    state.audit.reversed()
                        .filter { entry in
                            query.before.map { (entry.id ?? 0) < $0 } ?? true
                                && query.actor.map { entry.actor == $0 } ?? true
                                && query.action.map { entry.action == $0 } ?? true
                                && query.outcome.map { entry.outcome == $0 } ?? true
                        }
                        .prefix(command.limit))
            }
        }
        return handlers
    }

    var expiryHandlers: CommandHandlers {
        var handlers = CommandHandlers(topic: Topics.expiryCommands)
        handlers.on(StartExpiryRun.self) { command, _ in
            let now = WallClock.nowMs()
            return ExpiryJobReport(
                id: Self.job, trigger: "admin:" + command.requestedBy, dryRun: command.dryRun, status: .running,
                idleBeforeMs: now - Int64(command.idleLimitSeconds ?? 2_592_000) * 1000, startedAtMs: now)
        }
        handlers.on(ReadExpiryJob.self) { command, _ in
            guard command.id == Self.job else { throw ProtocolError(.noSuchChat, "no such expiry job") }
            return ExpiryJobReport(
                id: Self.job, trigger: "schedule", dryRun: true, status: .finished, idleBeforeMs: 1, startedAtMs: 2,
                finishedAtMs: 3, selected: 1, examined: 1, rooms: [7])
        }
        handlers.on(ListExpiryJobs.self) { _, _ in
            [
                ExpiryJobReport(
                    id: Self.job, trigger: "schedule", dryRun: false, status: .running, idleBeforeMs: 1, startedAtMs: 2)
            ]
        }
        return handlers
    }
}
