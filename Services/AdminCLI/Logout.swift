import ArgumentParser
import Foundation
import GeoChatAdminAPI
import GeoChatDomain

struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Revoke the token and forget it.")
    @OptionGroup var connection: Connection

    func run() async throws {
        _ = try await connection.client().send(
            "POST", "logout", body: [String: String](), as: AdminAPI.LogoutResponse.self)
        try CredentialStore.remove()
        print("logged out; the token is revoked")
    }
}
