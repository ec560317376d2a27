import ArgumentParser

/// Options every command that talks to a gateway takes.
struct Connection: ParsableArguments {
    @Option(help: "The gateway, e.g. http://127.0.0.1:8080 (default: GEOCHAT_ADMIN_URL, else the one logged in to).")
    var url: String?

    func client() throws -> AdminClient {
        try AdminClient(url: url, credentials: try CredentialStore.load())
    }
}
