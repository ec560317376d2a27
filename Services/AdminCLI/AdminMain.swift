import ArgumentParser

/// geochat-admin: the operator's command line for the admin API of any gateway.
@main
struct GeoChatAdmin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geochat-admin",
        abstract: "Administer a GeoChat cluster through the admin API of any gateway.",
        discussion: """
            Log in once (the token is kept in ~/.config/geochat/token, mode 0600, or given in
            GEOCHAT_ADMIN_TOKEN); the gateway URL comes from --url, GEOCHAT_ADMIN_URL or the login.
            """,
        subcommands: [
            Login.self, Logout.self, Rooms.self, Messages.self, Expire.self, Jobs.self, Sessions.self, BanCommand.self,
            UnbanCommand.self,
            BansCommand.self, SettingsCommand.self, Audit.self,
        ])
}
