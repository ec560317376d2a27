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
            guard argument.hasPrefix("--") else {
                i += 1
                continue
            }
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

    /// Every environment variable `GEOCHAT_<PREFIX>_<NAME>`, as `name` in lower
    /// case with `_` read as `.`: `GEOCHAT_RDKAFKA_SECURITY_PROTOCOL=SSL` is
    /// `security.protocol=SSL` under the prefix `rdkafka`.
    public func dottedProperties(prefix: String) -> [String: String] {
        let head = "GEOCHAT_" + prefix.uppercased() + "_"
        var properties: [String: String] = [:]
        for (name, value) in environment where name.hasPrefix(head) && name.count > head.count {
            properties[name.dropFirst(head.count).lowercased().replacingOccurrences(of: "_", with: ".")] = value
        }
        return properties
    }

    /// A Java-style properties file: `key=value` (or `key: value`) per line,
    /// `#` and `!` start comments, blanks around keys and values are dropped.
    /// A line without a separator is an error naming the file and line.
    public static func propertiesFile(at path: String) throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw ConfigurationError(key: "file", value: path, expected: "a readable UTF-8 properties file")
        }
        var properties: [String: String] = [:]
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix("!") { continue }
            guard let separator = line.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
                throw ConfigurationError(key: "\(path):\(number + 1)", value: line, expected: "key=value")
            }
            let key = line[..<separator].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else {
                throw ConfigurationError(
                    key: "\(path):\(number + 1)", value: line, expected: "a key before the separator")
            }
            properties[key] = line[line.index(after: separator)...].trimmingCharacters(in: .whitespaces)
        }
        return properties
    }
}

public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public let key: String, value: String, expected: String

    public init(key: String, value: String, expected: String) {
        self.key = key
        self.value = value
        self.expected = expected
    }

    public var description: String { "configuration \(key)=\(value): expected \(expected)" }
}
