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
