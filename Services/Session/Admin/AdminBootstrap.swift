import Foundation
import GeoChatDomain
import GeoChatPostgres
import GeoChatRuntime
import HummingbirdBcrypt
import Logging

/// `geochat-session bootstrap-admin --name NAME [--reset-password]`: creates an
/// admin account (the first one, or another) through the session service's own
/// store, with the password read from `GEOCHAT_ADMIN_PASSWORD` or the first line
/// of standard input. There is never a default password.
enum AdminBootstrap {
    static let command = "bootstrap-admin"

    static func run(_ env: ServiceEnvironment, bcryptCost: Int) async throws -> Int32 {
        guard let rawName = env.configuration.string("name"), let name = AdminName(rawName) else {
            print(
                "usage: geochat-session bootstrap-admin --name NAME [--reset-password]  (password on stdin or in GEOCHAT_ADMIN_PASSWORD)"
            )
            print("NAME: an ASCII letter, then letters, digits or _, at most 32")
            return 2
        }
        let replace = env.configuration.string("reset.password") == "true"
        guard
            let password = ProcessInfo.processInfo.environment["GEOCHAT_ADMIN_PASSWORD"]
                ?? readLine(strippingNewline: true)
        else {
            print("no password: give it on standard input or in GEOCHAT_ADMIN_PASSWORD")
            return 2
        }
        do { try AdminPassword.check(password) } catch {
            print(error.text)
            return 2
        }
        let database = try Database(settings: try PostgresSettings(env.configuration), logger: env.logger)
        return try await withThrowingTaskGroup(of: Int32?.self) { group in
            group.addTask {
                await database.run()
                return nil
            }
            group.addTask {
                let sessions = PostgresSessionStore(database: database)
                try await sessions.migrate()
                let store = AdminStore(database: database)
                let hash = Bcrypt.hash(password, cost: UInt8(bcryptCost))
                let saved = try await store.saveAdmin(name, passwordHash: hash, replace: replace)
                try await store.record(
                    AuditEntry(
                        actor: "console", action: "bootstrap-admin", target: name.value,
                        outcome: saved ? "ok" : "refused",
                        detail: replace ? "password reset" : (saved ? "created" : "exists"), gateway: ""))
                if saved {
                    print(replace ? "admin \(name) saved; its earlier tokens are revoked" : "admin \(name) created")
                    return 0
                }
                print("admin \(name) exists already (use --reset-password to give it a new password)")
                return 1
            }
            var code: Int32 = 1
            for try await result in group {
                if let result {
                    code = result
                    break
                }
            }
            group.cancelAll()
            return code
        }
    }
}
