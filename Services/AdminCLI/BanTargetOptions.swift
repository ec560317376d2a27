import ArgumentParser
import GeoChatAdminAPI
import GeoChatDomain

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
