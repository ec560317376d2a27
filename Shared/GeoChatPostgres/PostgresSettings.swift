/// Where a service's PostgreSQL is and how many connections its pool may hold.
public struct PostgresSettings: Sendable {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var maxConnections: Int

    public init(
        host: String = "127.0.0.1", port: Int = 5432, user: String = "postgres", password: String? = nil,
        database: String = "geochat", maxConnections: Int = 16
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.maxConnections = maxConnections
    }
}

import GeoChatRuntime

extension PostgresSettings {
    /// `pg.host`, `pg.port`, `pg.user`, `pg.password`, `pg.database`, `pg.pool.size`.
    public init(_ configuration: Configuration) throws {
        self.init(
            host: configuration.string("pg.host", default: "127.0.0.1"),
            port: try configuration.int("pg.port", default: 5432),
            user: configuration.string("pg.user", default: "postgres"),
            password: configuration.string("pg.password"),
            database: configuration.string("pg.database", default: "geochat"),
            maxConnections: try configuration.int("pg.pool.size", default: 16))
    }
}
