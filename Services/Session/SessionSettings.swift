import GeoChatDomain
import GeoChatRuntime

/// The session service's own settings (besides the common ones in `ServiceEnvironment`).
struct SessionSettings: Sendable {
    /// A session idle this long is ended (`session.lifetime.s`); an admin's live setting wins.
    var lifetimeSeconds: Int
    /// bcrypt cost of admin passwords (`admin.bcrypt.cost`, 4–31; each step doubles the work).
    var bcryptCost: Int
    /// How long an admin token is valid after login (`admin.token.ttl.s`).
    var tokenLifetimeSeconds: Int

    static let bcryptCosts = 4...31

    init(_ configuration: Configuration) throws {
        lifetimeSeconds = try configuration.int("session.lifetime.s", default: 86_400)
        bcryptCost = try configuration.int("admin.bcrypt.cost", default: 12)
        guard Self.bcryptCosts.contains(bcryptCost) else {
            throw ConfigurationError(key: "admin.bcrypt.cost", value: String(bcryptCost), expected: "4 to 31")
        }
        tokenLifetimeSeconds = try configuration.int("admin.token.ttl.s", default: 43_200)
    }
}
