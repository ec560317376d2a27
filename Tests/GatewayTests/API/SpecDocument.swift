import Foundation

/// An OpenAPI document read with Foundation, its local `$ref`s followed: the
/// operations, their parameters, and the schemas, with a small check of a JSON
/// value against a schema (types, properties, required, enums, items).
struct SpecDocument {
    struct Invalid: Error, CustomStringConvertible { let description: String }

    let root: [String: Any]

    init(bytes: [UInt8]) throws {
        guard let root = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw Invalid(description: "the document is not a JSON object")
        }
        self.root = root
    }

    /// The node, or the node its `$ref` (`#/…`) names, followed to the end.
    func resolve(_ node: Any?) -> Any? {
        guard let object = node as? [String: Any], let ref = object["$ref"] as? String, ref.hasPrefix("#/") else {
            return node
        }
        var target: Any? = root
        for part in ref.dropFirst(2).split(separator: "/") {
            let key = part.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            target = (target as? [String: Any])?[key]
        }
        return resolve(target)
    }

    func object(_ node: Any?) -> [String: Any] { resolve(node) as? [String: Any] ?? [:] }

    var schemaNames: [String] { object(object(root["components"])["schemas"]).keys.sorted() }

    func schema(_ name: String) -> [String: Any] { object(object(object(root["components"])["schemas"])[name]) }

    struct Operation {
        let id: String
        /// Upper case, as HTTP spells it.
        let method: String
        let path: String
        /// Resolved.
        let parameters: [[String: Any]]
        let requestSchema: Any?

        func names(in location: String) -> [String] {
            parameters.filter { $0["in"] as? String == location }.compactMap { $0["name"] as? String }
        }

        /// The descriptions of the parameters, where other spellings are named.
        var descriptions: String { parameters.compactMap { $0["description"] as? String }.joined(separator: "\n") }

        /// The required query parameters, each at its schema's minimum.
        func requiredQuery(_ spec: SpecDocument) throws -> [(String, String)] {
            let required = parameters.filter { $0["in"] as? String == "query" && $0["required"] as? Bool == true }
            return try required.map { parameter in
                let name = parameter["name"] as? String ?? "?"
                guard let minimum = spec.object(parameter["schema"])["minimum"] else {
                    throw Invalid(description: "\(id): the required '\(name)' has no minimum to send")
                }
                return (name, "\(minimum)")
            }
        }
    }

    var operations: [Operation] {
        object(root["paths"]).sorted { $0.key < $1.key }.flatMap { path, methods in
            object(methods).sorted { $0.key < $1.key }.map { method, raw in
                let operation = object(raw)
                let body = object(object(object(operation["requestBody"])["content"])["application/json"])["schema"]
                return Operation(
                    id: operation["operationId"] as? String ?? "?", method: method.uppercased(), path: path,
                    parameters: (operation["parameters"] as? [Any] ?? []).map { object($0) }, requestSchema: body)
            }
        }
    }

    /// An object with every property of the schema, each a value of its type.
    func example(of schema: Any?) throws -> [String: Any] {
        try object(object(schema)["properties"]).mapValues { property -> Any in
            switch object(property)["type"] as? String {
            case "integer": 3
            case "number": 0.5
            case "string": "Abc"
            case "boolean": true
            case "array": [Any]()
            default: throw Invalid(description: "no example for \(property)")
            }
        }
    }

    /// How `value` differs from `schema`: nothing when it conforms and has
    /// every documented property (the samples are whole).
    func mismatches(_ value: JSONValue, _ schema: Any?, at path: String) -> [String] {
        let schema = object(schema)
        let types = (schema["type"] as? [String]) ?? (schema["type"] as? String).map { [$0] } ?? []
        func wrongType(_ type: String, also: String? = nil) -> [String] {
            types.isEmpty || types.contains(type) || also.map(types.contains) == true
                ? [] : ["\(path): \(type), documented \(types)"]
        }
        switch value {
        case .null: return wrongType("null")
        case .bool: return wrongType("boolean")
        case .integer: return wrongType("integer", also: "number")
        case .number: return wrongType("number")
        case .string(let text):
            let allowed = schema["enum"] as? [String]
            let inEnum = allowed == nil || allowed!.contains(text)
            return wrongType("string") + (inEnum ? [] : ["\(path): '\(text)' not in the enum"])
        case .array(let items):
            return wrongType("array")
                + items.enumerated().flatMap { mismatches($1, schema["items"], at: "\(path)[\($0)]") }
        case .object(let members):
            let properties = object(schema["properties"])
            let required = schema["required"] as? [String] ?? []
            var problems = wrongType("object")
            problems += members.keys.filter { properties[$0] == nil }.sorted().map { "\(path).\($0): not documented" }
            problems += properties.keys.filter { members[$0] == nil }.sorted()
                .map { "\(path).\($0): documented, not encoded" }
            problems += required.filter { members[$0] == nil }.map { "\(path).\($0): required, missing" }
            for (key, member) in members.sorted(by: { $0.key < $1.key }) where properties[key] != nil {
                problems += mismatches(member, properties[key], at: "\(path).\(key)")
            }
            return problems
        }
    }
}

/// A JSON value as it was written: integers apart from other numbers.
enum JSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}
