import ArgumentParser
import GeoChatAdminAPI
import GeoChatDomain

struct BanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ban",
        abstract:
            "Ban a nickname or a session: every gateway answers it 403 banned and drops it from participant lists.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: BanTargetOptions
    @Option(help: "Why (kept in the ban and the audit log).") var reason = ""

    func run() async throws {
        let ban = try await connection.client().send(
            "POST", "bans", body: AdminAPI.BanRequest(nick: target.nick, session: target.session, reason: reason),
            as: AdminAPI.BanResponse.self
        ).ban
        print("banned \(Format.safe("\(ban.target)"))")
    }
}

/// Exactly one of --nick and --session.
struct BanTargetOptions: ParsableArguments {
    @Option(help: "A nickname (every session using it, any case).") var nick: String?
    @Option(help: "A session id.") var session: String?

    func validate() throws {
        guard (nick == nil) != (session == nil) else {
            throw ValidationError("give exactly one of --nick and --session")
        }
    }

    var path: String { nick.map { "bans/nick/" + Format.query($0) } ?? "bans/session/" + Format.query(session ?? "") }
}

struct BansCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bans", abstract: "List the bans in force.")
    @OptionGroup var connection: Connection

    func run() async throws {
        let bans = try await connection.client().get("bans", as: AdminAPI.BansResponse.self).bans
        Format.table(
            ["KIND", "VALUE", "SINCE", "BY", "REASON"],
            bans.map { [$0.target.kind.rawValue, $0.target.value, Format.time($0.atMs), $0.by, $0.reason] })
    }
}

struct UnbanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unban", abstract: "Lift a ban.")
    @OptionGroup var connection: Connection
    @OptionGroup var target: BanTargetOptions

    func run() async throws {
        let ban = try await connection.client().send(
            "DELETE", target.path, body: Optional<Int>.none, as: AdminAPI.BanResponse.self
        ).ban
        print("ban lifted: \(Format.safe("\(ban.target)"))")
    }
}
