import ArgumentParser
import Foundation
import GeoChatAdminAPI
import GeoChatDomain

struct Sessions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List live sessions (most recently seen first), end one, or rename one.",
        subcommands: [List.self, End.self, Rename.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Live sessions, most recently seen first.")
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

    struct End: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End a session: its next request is answered as for an unknown session.")
        @OptionGroup var connection: Connection
        @Argument(help: "The session id.") var session: String
        @Option(help: "Why (kept in the audit log).") var reason = ""

        func run() async throws {
            let ended = try await connection.client().delete(
                "sessions/" + Format.query(session), reason: reason, as: AdminAPI.SessionChangedResponse.self)
            print("session of \(Format.safe(ended.nick)) ended")
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rename a session (a nickname taken already gets a suffix, as a phone's rename does).")
        @OptionGroup var connection: Connection
        @Argument(help: "The session id.") var session: String
        @Argument(help: "The new nickname.") var nick: String
        @Option(help: "Why (kept in the audit log).") var reason = ""

        func run() async throws {
            let renamed = try await connection.client().send(
                "PUT", "sessions/" + Format.query(session),
                body: AdminAPI.RenameSessionRequest(nick: nick, reason: reason.isEmpty ? nil : reason),
                as: AdminAPI.SessionChangedResponse.self)
            print("session renamed to \(Format.safe(renamed.nick))")
        }
    }
}
