import Foundation
import GeoChatDomain
import GeoChatKafka
import GeoChatRuntime
import HummingbirdBcrypt
import Logging

/// Runs administration commands: logins and tokens, bans, settings, the audit
/// log. Changes to bans and settings are committed with their audit row, then
/// published on their state topic, then answered.
struct AdminCommands: Sendable {
    let store: AdminStore
    let state: StateBroadcaster
    let tokenLifetimeSeconds: Int
    let loginFailureLimit: Int
    /// Checked against when the name is unknown, so a miss costs as long as a hit
    /// (no timing answer to "does this admin exist"). Made with the configured cost.
    let decoyHash: String
    let logger: Logger

    func handle(_ envelope: RequestEnvelope<AdminCommand>) async -> Result<ReplyBody, ProtocolError> {
        let gateway = String(envelope.replyTo.dropFirst(Topics.replies(instance: "").count))
        return await answer(envelope, logger: logger) {
            .admin(try await run(envelope.command, gateway: gateway))
        }
    }

    private func run(_ command: AdminCommand, gateway: String) async throws -> AdminReply {
        switch command {
        case .login(let name, let password):
            return try await login(name: name, password: password, gateway: gateway)

        case .authenticate(let hash):
            guard let identity = try await store.identity(tokenHash: hash) else {
                return .unauthorized("the token is unknown, expired or revoked")
            }
            return .identity(identity)

        case .logout(let hash, let admin):
            try await store.revoke(tokenHash: hash)
            try await store.record(AuditEntry(actor: admin, action: "logout", target: admin, outcome: "ok", gateway: gateway))
            logger.info("admin logged out", metadata: ["admin": "\(admin)"])
            return .identity(AdminIdentity(name: admin, expiresAtMs: currentTimeMs()))

        case .sessions(let nick, let limit):
            if let nick, !nick.isEmpty, Nickname(nick) == nil {
                throw ProtocolError.bad("nick", "is not a nickname prefix (letters, digits, _)")
            }
            return .sessions(try await store.liveSessions(nickPrefix: nick, limit: min(max(limit, 1), 1000)))

        case .bans:
            return .bans(try await store.allBans().filter(\.active))

        case .ban(let target, let reason, let by):
            guard reason.count <= 200 else { throw ProtocolError.bad("reason", "is longer than 200 characters") }
            let audit = AuditEntry(actor: by, action: "ban", target: "\(target)", outcome: "ok", detail: reason, gateway: gateway)
            let ban = try await store.ban(target, reason: reason, by: by, audit: audit)
            try await state.publish(ban)
            logger.info("banned", metadata: ["admin": "\(by)", "target": "\(target)"])
            return .ban(ban)

        case .unban(let target, let by):
            let audit = AuditEntry(actor: by, action: "unban", target: "\(target)", outcome: "ok", gateway: gateway)
            guard let ban = try await store.unban(target, by: by, audit: audit) else {
                try await store.record(
                    AuditEntry(actor: by, action: "unban", target: "\(target)", outcome: "refused", detail: "not banned", gateway: gateway))
                throw ProtocolError(.badParam, "\(target) is not banned")
            }
            try await state.publish(ban)
            logger.info("ban lifted", metadata: ["admin": "\(by)", "target": "\(target)"])
            return .ban(ban)

        case .settings:
            return .settings(try await store.settings())

        case .changeSettings(let changes, let by):
            let detail = changes.keys.sorted().map { "\($0.prefix(64))=\(changes[$0]!)" }.joined(separator: " ")
            let checked: [SettingName: Int]
            do {
                checked = try SettingsCatalog.validate(changes)
            } catch {
                try await store.record(
                    AuditEntry(actor: by, action: "settings", target: "settings", outcome: "refused", detail: "\(detail): \(error.text)", gateway: gateway))
                throw error
            }
            let audit = AuditEntry(actor: by, action: "settings", target: "settings", outcome: "ok", detail: detail, gateway: gateway)
            for setting in try await store.change(checked, by: by, audit: audit) { try await state.publish(setting) }
            logger.info("settings changed", metadata: ["admin": "\(by)", "changes": "\(detail)"])
            return .settings(try await store.settings())

        case .audit(var entry):
            entry.gateway = gateway
            try await store.record(entry)
            return .audit([entry])

        case .auditLog(let limit):
            return .audit(try await store.auditLog(limit: min(max(limit, 1), 1000)))
        }
    }

    private func login(name rawName: String, password: String, gateway: String) async throws -> AdminReply {
        let target = AdminStore.clip(rawName, 64)
        func audit(_ outcome: String, _ detail: String = "") async throws {
            try await store.record(AuditEntry(actor: target, action: "login", target: target, outcome: outcome, detail: detail, gateway: gateway))
        }
        let limit = try await store.setting(.adminLoginFailures) ?? loginFailureLimit
        if try await store.recentLoginFailures(name: target) >= limit {
            try await audit("throttled")
            logger.warning("admin login throttled", metadata: ["admin": "\(target)"])
            throw ProtocolError(.rateLimited, "too many failed logins for this name; try again in a few minutes")
        }
        let name = AdminName(rawName)
        var stored: String?
        if let name { stored = try await store.passwordHash(of: name) }
        let hash = stored ?? decoyHash
        let matches = try await Self.offloadedVerify(password, hash: hash)
        guard let name, stored != nil, matches, password.utf8.count <= AdminPassword.length.upperBound else {
            try await audit("denied")
            logger.notice("admin login denied", metadata: ["admin": "\(target)"])
            return .unauthorized("wrong name or password")
        }
        let token = BearerToken.generate()
        let expires = try await store.issueToken(
            hash: BearerToken.hash(token)!, admin: name, lifetimeSeconds: tokenLifetimeSeconds)
        try await audit("ok")
        logger.info("admin logged in", metadata: ["admin": "\(name)"])
        return .token(AdminLogin(token: token, name: name.value, expiresAtMs: expires))
    }

    /// bcrypt takes tens to hundreds of milliseconds of CPU: off the cooperative threads.
    static func offloadedVerify(_ password: String, hash: String) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Bcrypt.verify(password, hash: hash))
            }
        }
    }
}
