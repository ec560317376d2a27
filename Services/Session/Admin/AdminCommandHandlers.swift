import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatMetrics
import HummingbirdBcrypt
import Logging
import Metrics

/// Runs administration commands: logins and tokens, bans, settings, the audit
/// log. Changes to bans and settings are committed with their audit row, then
/// published on their state topic, then answered.
struct AdminCommandHandlers: Sendable {
    let store: AdminStore
    let state: StateBroadcaster
    let tokenLifetimeSeconds: Int
    let loginFailureLimit: Int
    /// Checked against when the name is unknown, so a miss costs as long as a hit
    /// (no timing answer to "does this admin exist"). Made with the configured cost.
    let decoyHash: String
    /// Opens the passwords gateways seal (`LoginSeal`).
    let loginSeal: LoginSeal
    let logger: Logger
    /// At most one bcrypt at a time per instance, eight waiting (`PasswordChecks`).
    var passwordChecks = PasswordChecks()
    /// Throttled logins are counted, and audited once a minute per name at most.
    var throttled = ThrottleSummaries()

    static let throttledLogins = LabeledFamily(counter: MetricNames.adminLoginsThrottled, label: "by")

    var handlers: CommandHandlers {
        var handlers = CommandHandlers(topic: Topics.adminCommands)
        handlers.on(LogIn.self) { command, context in
            try await login(command, gateway: context.requester)
        }
        handlers.on(Authenticate.self) { command, _ in
            guard let identity = try await store.identity(tokenHash: command.tokenHash) else {
                return .refused("the token is unknown, expired or revoked")
            }
            return .granted(identity)
        }
        handlers.on(LogOut.self) { try await logout($0, gateway: $1.requester) }
        handlers.on(ListLiveSessions.self) { command, _ in
            if let nick = command.nick, !nick.isEmpty, Nickname(nick) == nil {
                throw ProtocolError.bad("nick", "is not a nickname prefix (letters, digits, _)")
            }
            return try await store.liveSessions(nickPrefix: command.nick, limit: min(max(command.limit, 1), 1000))
        }
        handlers.on(ListBans.self) { _, _ in try await store.allBans().filter(\.active) }
        handlers.on(PlaceBan.self) { try await ban($0, gateway: $1.requester) }
        handlers.on(LiftBan.self) { try await unban($0, gateway: $1.requester) }
        handlers.on(ReadSettings.self) { _, _ in try await store.settings() }
        handlers.on(ChangeSettings.self) { try await change($0, gateway: $1.requester) }
        handlers.on(RecordAudit.self) { command, context in
            var entry = command.entry
            entry.gateway = context.requester
            try await store.record(entry)
            return entry
        }
        handlers.on(ReadAuditLog.self) { command, _ in
            let query = command.query ?? AuditQuery()
            if let problem = query.problem { throw ProtocolError.bad(problem.field, problem.why) }
            return try await store.auditLog(limit: min(max(command.limit, 1), 1000), query: query)
        }
        return handlers
    }

    func logout(_ command: LogOut, gateway: String) async throws -> AdminIdentity {
        try await store.revoke(tokenHash: command.tokenHash)
        try await store.record(
            AuditEntry(actor: command.admin, action: "logout", target: command.admin, outcome: "ok", gateway: gateway))
        logger.info("admin logged out", metadata: ["admin": "\(command.admin)"])
        return AdminIdentity(name: command.admin, expiresAtMs: WallClock.nowMs())
    }

    func ban(_ command: PlaceBan, gateway: String) async throws -> Ban {
        let (target, by) = (command.target, command.by)
        guard command.reason.count <= 200 else { throw ProtocolError.bad("reason", "is longer than 200 characters") }
        let audit = AuditEntry(
            actor: by, action: "ban", target: "\(target)", outcome: "ok", detail: command.reason, gateway: gateway)
        let ban = try await store.ban(target, reason: command.reason, by: by, audit: audit)
        try await state.publish(ban)
        logger.info("banned", metadata: ["admin": "\(by)", "target": "\(target)"])
        return ban
    }

    func unban(_ command: LiftBan, gateway: String) async throws -> Ban {
        let (target, by) = (command.target, command.by)
        let audit = AuditEntry(actor: by, action: "unban", target: "\(target)", outcome: "ok", gateway: gateway)
        guard let ban = try await store.unban(target, by: by, audit: audit) else {
            try await store.record(
                AuditEntry(
                    actor: by, action: "unban", target: "\(target)", outcome: "refused", detail: "not banned",
                    gateway: gateway))
            throw ProtocolError(.badParam, "\(target) is not banned")
        }
        try await state.publish(ban)
        logger.info("ban lifted", metadata: ["admin": "\(by)", "target": "\(target)"])
        return ban
    }

    func change(_ command: ChangeSettings, gateway: String) async throws -> [SettingValue] {
        let (changes, by) = (command.changes, command.by)
        let detail = changes.keys.sorted().map { "\($0.prefix(64))=\(changes[$0]!)" }.joined(separator: " ")
        let checked: [SettingName: Int]
        do {
            checked = try SettingsCatalog.validate(changes)
        } catch {
            try await store.record(
                AuditEntry(
                    actor: by, action: "settings", target: "settings", outcome: "refused",
                    detail: "\(detail): \(error.text)", gateway: gateway))
            throw error
        }
        let audit = AuditEntry(
            actor: by, action: "settings", target: "settings", outcome: "ok", detail: detail, gateway: gateway)
        for setting in try await store.change(checked, by: by, audit: audit) { try await state.publish(setting) }
        logger.info("settings changed", metadata: ["admin": "\(by)", "changes": "\(detail)"])
        return try await store.settings()
    }

    func login(_ command: LogIn, gateway: String) async throws -> AdminAuthentication<AdminIdentity> {
        let rawName = command.name
        // A name no account can have (the nickname rule) is refused before
        // anything else, and never recorded as sent: the audit and the log get
        // a marker and the name escaped (`ControlCharacters`), so a name with
        // control characters cannot forge lines where it is shown.
        guard AdminName(rawName) != nil else {
            // As unknown names below: one row a minute, the latest shown.
            let shown = ControlCharacters.escaped(AdminStore.clip(rawName, 64))
            if let since = throttled.due(Self.invalidName, nowMs: WallClock.nowMs()) {
                try await store.record(
                    AuditEntry(
                        actor: Self.invalidName, action: "login", target: Self.invalidName, outcome: "denied",
                        detail: "name \(shown) is not a valid name"
                            + (since > 0 ? "; and \(since) more logins of invalid names in the minute before" : ""),
                        gateway: gateway))
                logger.notice(
                    "admin login with an invalid name denied", metadata: ["name": "\(shown)", "held_back": "\(since)"])
            }
            return .refused("wrong name or password")
        }
        let target = rawName
        let source = command.source ?? ""
        func audit(_ outcome: String, _ detail: String = "") async throws {
            try await store.record(
                AuditEntry(
                    actor: target, action: "login", target: target, outcome: outcome, detail: detail, gateway: gateway,
                    source: command.source))
        }
        let limit = try await store.setting(.adminLoginFailures) ?? loginFailureLimit
        // Per name and source address: failing on purpose from one place does
        // not lock the name's admin out where they log in from.
        if try await store.recentLoginFailures(name: target, source: source) >= limit {
            Self.throttledLogins["name"].increment()
            // One row (and one log line) per name per minute, however many attempts.
            if let since = throttled.due(target, nowMs: WallClock.nowMs()) {
                try await audit(
                    "throttled", since > 0 ? "and \(since) more throttled attempts in the minute before" : "")
                logger.warning("admin login throttled", metadata: ["admin": "\(target)", "suppressed": "\(since)"])
            }
            throw ProtocolError(.rateLimited, "too many failed logins for this name; try again in a few minutes")
        }
        // A seal this service cannot open was not made by a gateway of this
        // cluster for this name and token (or the keys differ): no password.
        guard BearerToken.isHash(command.tokenHash),
            let password = loginSeal.open(command.sealedPassword, name: rawName, tokenHash: command.tokenHash)
        else {
            try await audit("denied", "the password was not sealed with this cluster's login key")
            logger.error(
                "admin login with a password this service cannot unseal: GEOCHAT_LOGIN_SEAL_KEY differs between gateways and session services, or the command was forged",
                metadata: ["admin": "\(target)", "gateway": "\(gateway)"])
            return .refused("wrong name or password")
        }
        let name = AdminName(rawName)
        var stored: String?
        if let name { stored = try await store.passwordHash(of: name) }
        let hash = stored ?? decoyHash
        let matches: Bool
        do {
            matches = try await passwordChecks.verify(password, hash: hash) { Bcrypt.verify($0, hash: $1) }
        } catch is PasswordChecks.Busy {
            Self.throttledLogins["busy"].increment()
            throw ProtocolError(.rateLimited, "too many logins are being checked; try again in a few seconds")
        }
        guard let name, stored != nil, matches, password.utf8.count <= AdminPassword.length.upperBound else {
            guard stored == nil else {
                try await audit("denied")
                logger.notice("admin login denied", metadata: ["admin": "\(target)"])
                return .refused("wrong name or password")
            }
            // A name no account has: a flood of made-up names would bury the
            // audit log, so one row per minute and instance, with the latest
            // name and how many were held back (no account is at risk).
            if let since = throttled.due(Self.unknownName, nowMs: WallClock.nowMs()) {
                try await store.record(
                    AuditEntry(
                        actor: Self.unknownName, action: "login", target: target, outcome: "denied",
                        detail: since > 0 ? "and \(since) more logins of unknown names in the minute before" : "",
                        gateway: gateway))
                logger.notice(
                    "admin login of an unknown name denied", metadata: ["name": "\(target)", "held_back": "\(since)"])
            }
            return .refused("wrong name or password")
        }
        let expires = try await store.issueToken(
            hash: command.tokenHash, admin: name, lifetimeSeconds: tokenLifetimeSeconds)
        try await audit("ok")
        logger.info("admin logged in", metadata: ["admin": "\(name)"])
        return .granted(AdminIdentity(name: name.value, expiresAtMs: expires))
    }

    /// The audit's actor and target for a login whose name is not a valid name.
    static let invalidName = "(invalid name)"
    /// The audit's actor for logins of valid names no account has (one row a minute).
    static let unknownName = "(unknown name)"

}
