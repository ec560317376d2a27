import Foundation
import GeoChatRuntime

extension ServiceHost {
    /// The service's PostgreSQL pool from its configuration (`pg.*`), run for the process's life.
    /// A configuration that cannot work stops the process with a clear line (exit 2).
    public mutating func database() throws -> Database {
        let database: Database
        do {
            database = try Database(settings: try PostgresSettings(configuration), logger: logger)
        } catch {
            logger.critical("configuration refused; not starting", metadata: ["error": "\(error)"])
            exit(2)
        }
        uses(database.client)
        return database
    }
}
