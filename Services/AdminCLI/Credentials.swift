import Foundation

/// Where the CLI keeps its login: `$XDG_CONFIG_HOME/geochat/token` (else
/// `~/.config/geochat/token`), JSON, readable by its owner only (0600).
/// `GEOCHAT_ADMIN_TOKEN` and `GEOCHAT_ADMIN_URL` override what it holds.
struct Credentials: Codable {
    var url: String
    var token: String
    var name: String
    var expiresAtMs: Int64
}
