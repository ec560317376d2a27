import Foundation
import GeoChatPostgres
import GeoChatRuntime
import GeoChatTestSupport
import Logging
import PostgresNIO
import Testing

/// PostgreSQL over TLS as operators configure it (`GEOCHAT_PG_SSLMODE`,
/// `GEOCHAT_PG_SSLROOTCERT`), against the test PostgreSQL, which deploy/test.sh
/// runs with `ssl=on` and a certificate signed by a CA of its own.
@Suite(.enabled(if: ScratchDatabase.certificateAuthority != nil || ScratchDatabase.isRequired))
struct PostgresTLSTests {
    struct NoRow: Error {}
    let logger = Logger(label: "tls-test")

    func settings(_ mode: PostgresSettings.TLSMode, ca: String?, timeoutMs: Int? = nil) throws -> PostgresSettings {
        var settings = ScratchDatabase.settings(port: try #require(ScratchDatabase.port), database: "postgres")
        settings.tlsMode = mode
        settings.rootCertificatePath = ca
        settings.statementTimeoutMs = timeoutMs
        settings.maxConnections = 1
        return settings
    }

    /// Whether this connection is encrypted, and its statement timeout.
    func connectionFacts(_ settings: PostgresSettings) async throws -> (ssl: Bool, timeout: String) {
        let database = try Database(settings: settings, logger: logger)
        return try await ScratchDatabase.running(database) {
            let rows = try await database.client.query(
                "SELECT ssl, current_setting('statement_timeout') FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                logger: logger)
            for try await (ssl, timeout) in rows.decode((Bool, String).self) { return (ssl, timeout) }
            throw NoRow()

        }
    }

    @Test func verifyFullWithTheServersCAConnectsEncrypted() async throws {
        let facts = try await connectionFacts(
            settings(.verifyFull, ca: ScratchDatabase.certificateAuthority, timeoutMs: 1234))
        #expect(facts.ssl)
        #expect(facts.timeout == "1234ms", "the statement timeout reaches every connection")
    }

    @Test func verifyFullRefusesAServerItsCADidNotSign() async throws {
        // The system's roots: the test CA is not among them, so the certificate is not trusted.
        let settings = try settings(.verifyFull, ca: nil)
        await #expect(throws: (any Error).self) { try await connectionFacts(settings) }
    }

    @Test func requireEncryptsWithoutChecking() async throws {
        #expect(try await connectionFacts(settings(.require, ca: nil)).ssl)
    }

    @Test func anUnreadableCAFileStopsTheStartWithItsName() throws {
        let settings = try settings(.verifyFull, ca: "/nonexistent/ca.crt")
        #expect(throws: ConfigurationError.self) { _ = try Database(settings: settings, logger: logger) }
    }

    @Test func theModeIsReadAsLibpqSpellsIt() throws {
        let read = try PostgresSettings(
            Configuration(
                arguments: [],
                environment: [
                    "GEOCHAT_PG_SSLMODE": "verify-full", "GEOCHAT_PG_SSLROOTCERT": "/ca.crt",
                    "GEOCHAT_PG_STATEMENT_TIMEOUT_MS": "5000", "GEOCHAT_PG_POOL_SIZE": "3",
                ]))
        #expect(read.tlsMode == .verifyFull && read.rootCertificatePath == "/ca.crt")
        #expect(read.statementTimeoutMs == 5000 && read.maxConnections == 3)
        #expect(throws: ConfigurationError.self) {
            try PostgresSettings(Configuration(arguments: [], environment: ["GEOCHAT_PG_SSLMODE": "verify-ca"]))
        }
        #expect(
            try PostgresSettings(Configuration(arguments: [], environment: [:])).tlsMode == .require,
            "encrypted unless told otherwise")
    }
}
