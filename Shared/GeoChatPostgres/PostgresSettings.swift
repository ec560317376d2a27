import Foundation
import GeoChatRuntime
import NIOSSL

/// Where a service's PostgreSQL is, how to reach it safely, and how many
/// connections its pool may hold.
public struct PostgresSettings: Sendable {
    /// libpq's names, so an operator's `sslmode` means here what it means in `psql`.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Plaintext: only where nothing crosses a network, and only when asked for.
        case disable
        /// Encrypted, the server's certificate not checked.
        case require
        /// Encrypted, the certificate checked against the CA (`rootCertificatePath`,
        /// else the system's roots) and the host name.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var maxConnections: Int
    public var tlsMode: TLSMode
    /// A PEM file of the CA(s) that sign the server's certificate (`sslrootcert`).
    public var rootCertificatePath: String?
    /// PostgreSQL's `statement_timeout` for every connection of the pool (nil: the server's).
    public var statementTimeoutMs: Int?

    public init(
        host: String = "127.0.0.1", port: Int = 5432, user: String = "postgres", password: String? = nil,
        database: String = "geochat", maxConnections: Int = 16, tlsMode: TLSMode = .disable,
        rootCertificatePath: String? = nil, statementTimeoutMs: Int? = nil
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.maxConnections = maxConnections
        self.tlsMode = tlsMode
        self.rootCertificatePath = rootCertificatePath
        self.statementTimeoutMs = statementTimeoutMs
    }

    /// The TLS configuration for `tlsMode`; a CA file that cannot be read is an
    /// error now, at start, not at the first connection.
    func tlsConfiguration() throws -> TLSConfiguration? {
        switch tlsMode {
        case .disable:
            return nil
        case .require:
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            return tls
        case .verifyFull:
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .fullVerification
            if let path = rootCertificatePath {
                do {
                    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
                } catch {
                    throw ConfigurationError(
                        key: "pg.sslrootcert", value: path, expected: "a readable PEM file of CA certificates")
                }
            }
            return tls
        }
    }
}

extension PostgresSettings {
    /// `pg.host`, `pg.port`, `pg.user`, `pg.password` (or `pg.password.file`,
    /// a file holding it, so that it stays out of the environment), `pg.database`,
    /// `pg.pool.size`, `pg.sslmode`, `pg.sslrootcert`, `pg.statement.timeout.ms`.
    /// Without `pg.sslmode` the connection is encrypted (`require`): a server
    /// without TLS stops the start rather than carrying passwords and chat in
    /// the clear (`disable` must be set on purpose).
    public init(_ configuration: Configuration) throws {
        let modeName = configuration.string("pg.sslmode", default: TLSMode.require.rawValue)
        guard let mode = TLSMode(rawValue: modeName) else {
            throw ConfigurationError(
                key: "pg.sslmode", value: modeName, expected: TLSMode.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let poolSize = try configuration.int("pg.pool.size", default: 16)
        guard poolSize >= 1 else {
            throw ConfigurationError(key: "pg.pool.size", value: String(poolSize), expected: "1 or more")
        }
        var timeout: Int?
        if configuration.string("pg.statement.timeout.ms") != nil {
            timeout = try configuration.int("pg.statement.timeout.ms", default: 0)
            guard timeout! >= 0 else {
                throw ConfigurationError(
                    key: "pg.statement.timeout.ms", value: String(timeout!), expected: "0 (none) or more")
            }
        }
        self.init(
            host: configuration.string("pg.host", default: "127.0.0.1"),
            port: try configuration.int("pg.port", default: 5432),
            user: configuration.string("pg.user", default: "postgres"),
            password: try Self.password(configuration),
            database: configuration.string("pg.database", default: "geochat"),
            maxConnections: poolSize, tlsMode: mode, rootCertificatePath: configuration.string("pg.sslrootcert"),
            statementTimeoutMs: timeout)
    }

    /// `pg.password`, else the first line of the file `pg.password.file` names.
    static func password(_ configuration: Configuration) throws -> String? {
        if let password = configuration.string("pg.password") { return password }
        guard let file = configuration.string("pg.password.file") else { return nil }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8),
            let line = text.split(whereSeparator: \.isNewline).first, !line.isEmpty
        else {
            throw ConfigurationError(
                key: "pg.password.file", value: file, expected: "a readable file whose first line is the password")
        }
        return String(line)
    }
}
