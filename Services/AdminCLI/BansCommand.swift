import ArgumentParser
import GeoChatAdminAPI
import GeoChatDomain

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
