import ArgumentParser
import Foundation
import GeoChatAdminAPI
import GeoChatDomain

#if canImport(Glibc)
    import Glibc
#endif

struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Log in and keep the token (~/.config/geochat/token, mode 0600).",
        discussion:
            "The password comes from GEOCHAT_ADMIN_PASSWORD, else a prompt (a terminal), else the first line of standard input."
    )

    @OptionGroup var connection: Connection
    @Option(help: "The admin name.") var name: String

    func run() async throws {
        guard let url = connection.url ?? ProcessInfo.processInfo.environment["GEOCHAT_ADMIN_URL"] else {
            throw CLIError("give the gateway: --url http://HOST:PORT (or GEOCHAT_ADMIN_URL)")
        }
        let password = try Self.password()
        let client = try AdminClient(url: url, credentials: nil)
        let login = try await client.send(
            "POST", "login", body: AdminAPI.LoginRequest(name: name, password: password), as: AdminLogin.self)
        try CredentialStore.save(
            Credentials(url: client.baseURL, token: login.token, name: login.name, expiresAtMs: login.expiresAtMs))
        print(
            "logged in as \(Format.safe(login.name)) until \(Format.time(login.expiresAtMs)); token kept in \(CredentialStore.file.path)"
        )
    }

    static func password() throws -> String {
        if let password = ProcessInfo.processInfo.environment["GEOCHAT_ADMIN_PASSWORD"] { return password }
        if isatty(0) == 1, let typed = getpass("Password: ") { return String(cString: typed) }
        guard let line = readLine(strippingNewline: true) else { throw CLIError("no password on standard input") }
        return line
    }
}

struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Revoke the token and forget it.")
    @OptionGroup var connection: Connection

    func run() async throws {
        _ = try await connection.client().send(
            "POST", "logout", body: [String: String](), as: AdminAPI.LogoutResponse.self)
        try CredentialStore.remove()
        print("logged out; the token is revoked")
    }
}

struct Sessions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List live sessions, most recently seen first.")
    @OptionGroup var connection: Connection
    @Option(help: "Only nicknames starting with this.") var nick: String?
    @Option(help: "At most this many.") var limit = 50

    func run() async throws {
        var path = "sessions?limit=\(limit)"
        if let nick { path += "&nick=" + Format.query(nick) }
        let sessions = try await connection.client().get(path, as: AdminAPI.SessionsResponse.self).sessions
        Format.table(
            ["SESSION", "NICK", "LAST SEEN", "STARTED", "BANNED"],
            sessions.map {
                [$0.id, $0.nick, Format.time($0.lastSeenAtMs), Format.time($0.createdAtMs), $0.banned ? "yes" : ""]
            })
    }
}

struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the audit log, newest first, a page at a time.")
    @OptionGroup var connection: Connection
    @Option(help: "At most this many rows.") var limit = 50
    @Option(help: "Only rows older than this row id (the next page: the id printed after a full page).") var before:
        Int64?
    @Option(help: "Only rows of this admin (or \"(invalid name)\", \"-\").") var actor: String?
    @Option(help: "Only this action (login, logout, ban, unban, settings, remove-room, expiry-run, bootstrap-admin).")
    var action: String?
    @Option(help: "Only this outcome (ok, denied, refused, failed, throttled).") var outcome: String?

    func run() async throws {
        var path = "audit?limit=\(limit)"
        if let before { path += "&before=\(before)" }
        for (name, value) in [("actor", actor), ("action", action), ("outcome", outcome)] {
            if let value { path += "&\(name)=" + Format.query(value) }
        }
        let page = try await connection.client().get(path, as: AdminAPI.AuditResponse.self)
        Format.table(
            ["ID", "TIME", "ADMIN", "ACTION", "TARGET", "OUTCOME", "DETAIL"],
            page.entries.map {
                [
                    $0.id.map(String.init) ?? "", Format.time($0.atMs ?? 0), $0.actor, $0.action, $0.target, $0.outcome,
                    $0.detail,
                ]
            })
        if let next = page.next { print("more: --before \(next)") }
    }
}
