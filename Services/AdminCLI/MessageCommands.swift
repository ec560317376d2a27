import ArgumentParser
import Foundation
import GeoChatAdminAPI
import GeoChatDomain

struct Messages: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove one message, or a session's messages (in one room or everywhere, from a time on).",
        subcommands: [Remove.self, RemoveBySession.self])

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove one message: gone from every poll, history, push stream and transcript.")
        @OptionGroup var connection: Connection
        @Argument(help: "The room id.") var room: Int64
        @Argument(help: "The message id.") var message: Int64
        @Option(help: "Why (kept in the audit log).") var reason = ""

        func run() async throws {
            let answer = try await connection.client().delete(
                "rooms/\(room)/messages/\(message)", reason: reason, as: AdminAPI.MessagesRemovedResponse.self)
            print(answer.removed == 1 ? "message \(message) in room \(room) removed" : "removed already")
        }
    }

    struct RemoveBySession: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-by-session",
            abstract: "Remove a session's messages, in one room or everywhere, from a time on, with progress.")
        @OptionGroup var connection: Connection
        @Argument(help: "The session id (geochat-admin sessions lists them).") var session: String
        @Option(help: "Only in this room.") var room: Int64?
        @Option(help: "Only messages of the last … (30m, 2h, 7d); absent: all of them.") var since: String?
        @Option(help: "Why (kept in the audit log).") var reason = ""
        @Option(help: "Messages per request (1-\(RemoveMessages.maxLimit)).") var batch = 2000

        func validate() throws {
            if let since, DurationText.seconds(since) == nil { throw ValidationError("--since: not a duration") }
            guard (1...RemoveMessages.maxLimit).contains(batch) else {
                throw ValidationError("--batch must be between 1 and \(RemoveMessages.maxLimit)")
            }
        }

        func run() async throws {
            let client = try connection.client()
            // One instant for every batch: a say made during the removal is in it or not, never half.
            let sinceMs = since.flatMap(DurationText.seconds).map { WallClock.nowMs() - Int64($0) * 1000 }
            let request = AdminAPI.RemoveMessagesRequest(
                session: session, room: room, sinceMs: sinceMs, reason: reason.isEmpty ? nil : reason, limit: batch)
            var total = 0
            while true {
                let answer = try await client.send(
                    "POST", "messages/removals", body: request, as: AdminAPI.MessagesRemovedResponse.self)
                total += answer.removed
                guard answer.more else { break }
                FileHandle.standardError.write(Data("removed \(total) so far…\n".utf8))
            }
            print("\(total) message\(total == 1 ? "" : "s") of session \(Format.safe(session)) removed")
        }
    }
}
