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
