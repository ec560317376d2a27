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
            abstract: "Remove a session's messages, in one room or everywhere, from a time on, with progress.",
            discussion: "Name the session, or one of its messages with --sender-of ROOM/MESSAGE (from a transcript).")
        @OptionGroup var connection: Connection
        @Argument(help: "The session id (geochat-admin sessions lists them).") var session: String?
        @Option(
            name: .customLong("sender-of"), help: "Instead of a session id: the writer of this message (ROOM/MESSAGE).")
        var senderOf: String?
        @Option(help: "Only in this room.") var room: Int64?
        @Option(help: "Only messages of the last … (30m, 2h, 7d); absent: all of them.") var since: String?
        @Option(help: "Why (kept in the audit log).") var reason = ""
        @Option(help: "Messages per request (1-\(RemoveMessages.maxLimit)).") var batch = 500

        /// `--sender-of 42/17`: room 42, message 17.
        var message: MessageKey? {
            guard let parts = senderOf?.split(separator: "/"), parts.count == 2, let room = Int64(parts[0]),
                let id = Int64(parts[1]), room > 0, id > 0
            else { return nil }
            return MessageKey(room: RoomID(room), id: MessageID(id))
        }

        func validate() throws {
            guard (session == nil) != (senderOf == nil) else {
                throw ValidationError("give a session id or --sender-of ROOM/MESSAGE, one of the two")
            }
            if senderOf != nil, message == nil { throw ValidationError("--sender-of: ROOM/MESSAGE, e.g. 42/17") }
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
                session: session, senderOf: message, room: room, sinceMs: sinceMs,
                reason: reason.isEmpty ? nil : reason, limit: batch)
            var total = 0
            while true {
                let answer = try await client.send(
                    "POST", "messages/removals", body: request, as: AdminAPI.MessagesRemovedResponse.self)
                total += answer.removed
                guard answer.more else { break }
                FileHandle.standardError.write(Data("removed \(total) so far…\n".utf8))
            }
            let whose = session.map { "session \(Format.safe($0))" } ?? "the sender of message \(senderOf ?? "")"
            print("\(total) message\(total == 1 ? "" : "s") of \(whose) removed")
        }
    }
}
