import Foundation

/// Settings from the command line and the environment, in that order of
/// precedence, then the default. One key has three spellings:
/// `http.port` is `--http-port 8081` (or `--http-port=8081`) and `GEOCHAT_HTTP_PORT`.
public struct Configuration: Sendable {
    private let flags: [String: String]
    private let environment: [String: String]

    public init(
        arguments: [String] = CommandLine.arguments, environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        var flags: [String: String] = [:]
        var i = 1
        while i < arguments.count {
            let argument = arguments[i]
            guard argument.hasPrefix("--") else { i += 1; continue }
            let body = argument.dropFirst(2)
            if let eq = body.firstIndex(of: "=") {
                flags[String(body[..<eq])] = String(body[body.index(after: eq)...])
                i += 1
            } else if i + 1 < arguments.count {
                flags[String(body)] = arguments[i + 1]
                i += 2
            } else {
                flags[String(body)] = "true"
                i += 1
            }
        }
        self.flags = flags
        self.environment = environment
    }

    public func string(_ key: String) -> String? {
        flags[key.replacingOccurrences(of: ".", with: "-")]
            ?? environment["GEOCHAT_" + key.uppercased().replacingOccurrences(of: ".", with: "_")]
    }

    public func string(_ key: String, default value: String) -> String { string(key) ?? value }

    public func int(_ key: String, default value: Int) throws -> Int {
        guard let raw = string(key) else { return value }
        guard let parsed = Int(raw) else { throw ConfigurationError(key: key, value: raw, expected: "an integer") }
        return parsed
    }

    public func double(_ key: String, default value: Double) throws -> Double {
        guard let raw = string(key) else { return value }
        guard let parsed = Double(raw), parsed.isFinite else {
            throw ConfigurationError(key: key, value: raw, expected: "a number")
        }
        return parsed
    }

    public func seconds(_ key: String, default value: Int) throws -> Duration {
        .seconds(try int(key, default: value))
    }
}

public struct ConfigurationError: Error, CustomStringConvertible {
    public let key: String, value: String, expected: String
    public var description: String { "configuration \(key)=\(value): expected \(expected)" }
}
