import ArgumentParser
import GeoChatAdminAPI
import GeoChatDomain

struct Rooms: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "List or search rooms (last visit, members, messages), show one, export its transcript, change one, or remove one now.",
        subcommands: [List.self, Show.self, Export.self, Change.self, Remove.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rooms, most recently visited first.")
        @OptionGroup var connection: Connection
        @Option(name: .shortAndLong, help: "Only rooms whose topic contains this (or whose id it is).") var search:
            String?
        @Option(help: "At most this many.") var limit = 50

        func run() async throws {
            var path = "rooms?limit=\(limit)"
            if let search { path += "&q=" + Format.query(search) }
            let rooms = try await connection.client().get(path, as: AdminAPI.RoomsResponse.self).rooms
            Format.table(
                ["ID", "TOPIC", "Z", "LAST VISIT", "IDLE", "MEMBERS", "MESSAGES"],
                rooms.map {
                    [
                        String($0.id), ($0.lobby ? "[lobby] " : "") + $0.topic, String($0.z),
                        Format.time($0.lastVisitedAtMs),
                        Format.age($0.lastVisitedAtMs), String($0.members), $0.messages.map(String.init) ?? "?",
                    ]
                })
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One room with its present participants.")
        @OptionGroup var connection: Connection
        @Argument(help: "The room id.") var room: Int64

        func run() async throws {
            let room = try await connection.client().get("rooms/\(room)", as: AdminAPI.RoomResponse.self).room
            print("room \(room.id)\(room.lobby ? " (lobby)" : ""): \(Format.safe(room.topic))")
            print("  place        x \(room.x)  y \(room.y)  zoom \(room.z)")
            print("  created      \(Format.time(room.createdAtMs))")
            print("  last visit   \(Format.time(room.lastVisitedAtMs)) (\(Format.age(room.lastVisitedAtMs)) ago)")
            print("  members      \(room.members)")
            print("  messages     \(room.messages.map(String.init) ?? "?")")
            print("  present      \(Format.safe((room.participants ?? []).joined(separator: ", ")))")
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Write a room's transcript, from its first message, to standard output: text (one line a message) or JSON."
        )
        @OptionGroup var connection: Connection
        @Argument(help: "The room id.") var room: Int64
        @Option(help: "text or json.") var format: TranscriptFormat = .text
        @Option(help: "Start after this message id (0: from the first).") var after: Int64 = 0

        enum TranscriptFormat: String, ExpressibleByArgument { case text, json }

        func run() async throws {
            let client = try connection.client()
            var after = after
            var written = 0
            if format == .json { print("{\"room\":\(room),\"messages\":[", terminator: "") }
            // Page by page, so a room of any size is written in bounded memory.
            while true {
                let page = try await client.get(
                    "rooms/\(room)/transcript?after=\(after)&limit=\(Limits.maxMessageLimit)",
                    as: AdminAPI.TranscriptResponse.self)
                for message in page.messages {
                    switch format {
                    case .text: print(Transcript.line(message), terminator: "")
                    case .json: print((written == 0 ? "" : ",") + (try Format.json(message)), terminator: "")
                    }
                    written += 1
                }
                guard let next = page.next else { break }
                after = next.rawValue
            }
            if format == .json { print("]}") }
        }
    }

    struct Change: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a room's topic, move it, or change its zoom level; every gateway's map follows.")
        @OptionGroup var connection: Connection
        @Argument(help: "The room id.") var room: Int64
        @Option(help: "The new topic.") var topic: String?
        @Option(help: "The new place's latitude (with --longitude).") var latitude: Double?
        @Option(help: "The new place's longitude (with --latitude).") var longitude: Double?
        @Option(help: "The new zoom level (0-17).") var zoom: Int?
        @Option(help: "Why (kept in the audit log).") var reason = ""

        func validate() throws {
            guard (latitude == nil) == (longitude == nil) else {
                throw ValidationError("give both --latitude and --longitude, or neither")
            }
            guard topic != nil || latitude != nil || zoom != nil else {
                throw ValidationError("give at least one of --topic, --latitude/--longitude, --zoom")
            }
        }

        func run() async throws {
            let request = AdminAPI.ChangeRoomRequest(
                topic: topic, latitude: latitude, longitude: longitude, zoom: zoom,
                reason: reason.isEmpty ? nil : reason)
            let room = try await connection.client().send(
                "PATCH", "rooms/\(room)", body: request, as: AdminAPI.ChangedRoomResponse.self)
            print(
                "room \(room.id): \(Format.safe(room.topic)) at \(room.latitude), \(room.longitude), zoom \(room.zoom)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a room now, with its messages and memberships (its id is never reused).")
        @OptionGroup var connection: Connection
        @Argument(help: "The room id.") var room: Int64
        @Option(help: "Why (kept in the audit log).") var reason = ""

        func run() async throws {
            let removed = try await connection.client().delete(
                "rooms/\(room)", reason: reason, as: AdminAPI.RemovedResponse.self)
            print("room \(removed.removed) removed")
        }
    }
}
