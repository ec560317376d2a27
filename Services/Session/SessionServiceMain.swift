import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import GeoChatPostgres
import GeoChatRuntime
import HummingbirdBcrypt

/// geochat-session: owns `session.sessions`; starts, renames, ends and expires
/// sessions. Also owns administration: admin accounts and tokens, bans,
/// settings and the audit log (Admin/).
@main
struct SessionServiceMain {
    static func main() async throws {
        let env = try ServiceEnvironment(service: "session", defaultPort: 9101)
        let settings = env.settings(SessionSettings.init)
        if CommandLine.arguments.dropFirst().first == AdminBootstrap.command {
            exit(try await AdminBootstrap.run(env, bcryptCost: settings.bcryptCost))
        }
        var host = try ServiceHost(environment: env)
        let database = try host.database()
        let store = PostgresSessionStore(database: database)
        let adminStore = AdminStore(database: database)
        host.migrates(store.migrate)
        let outbox = OutboxRelay(outbox: store.outbox, events: host.events, logger: env.logger)
        host.runs("outbox relay") { await outbox.run() }
        try host.handles(
            SessionCommandHandlers(store: store, outbox: outbox, logger: env.logger).handlers,
            group: ConsumerGroups.sessionCommands)

        let topics = host.topics
        let broadcaster = StateBroadcaster(
            store: adminStore, events: host.events,
            stateRecordCount: { try await topics.recordCount(Topics.settings) + topics.recordCount(Topics.bans) },
            logger: env.logger)
        let admin = AdminCommandHandlers(
            store: adminStore, state: broadcaster,
            tokenLifetimeSeconds: settings.tokenLifetimeSeconds,
            loginFailureLimit: SettingsCatalog.definition(.adminLoginFailures).defaultValue,
            decoyHash: Bcrypt.hash("decoy password of no account", cost: UInt8(settings.bcryptCost)),
            loginSeal: env.loginSeal(), logger: env.logger)
        try host.handles(admin.handlers, group: ConsumerGroups.adminCommands, pace: .background)
        host.runs("settings and bans broadcast") {
            await broadcaster.run(watchingForLostRecords: env.kafka.profile.republishesLostState)
        }

        let housekeeping = SessionHousekeeping(
            store: store, outbox: outbox,
            lifetimeSeconds: { (try? await adminStore.setting(.sessionLifetime)) ?? nil ?? settings.lifetimeSeconds },
            logger: env.logger)
        let presence = try host.consumer([Topics.presence], .group(ConsumerGroups.sessionPresence), pace: .background)
        host.runs("presence") { await housekeeping.recordPresence(from: presence) }
        host.runs("idle sessions") { try await housekeeping.expireIdleSessions(every: .seconds(30)) }
        try await host.run()
    }
}
