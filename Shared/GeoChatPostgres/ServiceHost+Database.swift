import GeoChatRuntime

extension ServiceHost {
    /// The service's PostgreSQL pool from its configuration (`pg.*`), run for the process's life.
    public mutating func database() throws -> Database {
        let database = Database(settings: try PostgresSettings(configuration), logger: logger)
        uses(database.client)
        return database
    }
}
