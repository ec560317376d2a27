import Foundation

enum CredentialStore {
    static var file: URL {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".config")
        return base.appendingPathComponent("geochat").appendingPathComponent("token")
    }

    static func load() throws -> Credentials? {
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        return try JSONDecoder().decode(Credentials.self, from: data)
    }

    /// Written to a new file with mode 0600 from the start, then moved into place.
    static func save(_ credentials: Credentials) throws {
        let folder = file.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = folder.appendingPathComponent("token.\(ProcessInfo.processInfo.processIdentifier).tmp")
        let data = try JSONEncoder().encode(credentials)
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
        else {
            throw CLIError("cannot write \(temporary.path)")
        }
        if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
        try FileManager.default.moveItem(at: temporary, to: file)
    }

    static func remove() throws {
        if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
    }
}

/// Where the CLI keeps its login: `$XDG_CONFIG_HOME/geochat/token` (else
/// `~/.config/geochat/token`), JSON, readable by its owner only (0600).
/// `GEOCHAT_ADMIN_TOKEN` and `GEOCHAT_ADMIN_URL` override what it holds.
struct Credentials: Codable {
    var url: String
    var token: String
    var name: String
    var expiresAtMs: Int64
}
