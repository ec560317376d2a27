import ArgumentParser
import GeoChatAdminAPI
import GeoChatDomain

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
