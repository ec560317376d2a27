import ArgumentParser
import Foundation
import GeoChatAdminAPI
import GeoChatDomain

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
