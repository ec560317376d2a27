import GeoChatDomain

/// The parameters of one legacy request: query string and form body, parsed by
/// the contract's rules (sections 1, 5 and 7).
///
/// Parsing checks what applies to every parameter (percent-encoding, the 4 KiB
/// bound, counts); a value's text rules (UTF-8, XML characters, conflicts) are
/// checked when a command reads it, because unknown parameters are ignored.
public struct FormParameters: Sendable {
    /// Values per name, in order of appearance, per source.
    var query: [String: [[UInt8]]] = [:]
    var body: [String: [[UInt8]]] = [:]

    /// Concrete byte arrays: the poll path's entry, cheap across modules (a
    /// generic initializer is not specialized there and showed in the profile).
    public init(query: [UInt8], body: [UInt8]) throws(ProtocolError) {
        // The query string is bounded like the body (the HTTP decoder already
        // refuses a request head over 80 KiB): more is `too_large` before any work.
        guard query.count <= Limits.maxQueryBytes else {
            throw ProtocolError(.tooLarge, "the query string is over \(Limits.maxQueryBytes) bytes")
        }
        guard body.count <= Limits.maxBodyBytes else {
            throw ProtocolError(.tooLarge, "the request body is over \(Limits.maxBodyBytes) bytes")
        }
        var count = 0
        self.query = try Self.parse(query, count: &count)
        self.body = try Self.parse(body, count: &count)
    }

    public init(query: some Sequence<UInt8>, body: some Sequence<UInt8>) throws(ProtocolError) {
        try self.init(query: Array(query), body: Array(body))
    }

    public init(query: String, body: String = "") throws(ProtocolError) {
        try self.init(query: Array(query.utf8), body: Array(body.utf8))
    }

    /// The value of a parameter given under any of its alias `names`, or nil when
    /// absent. The body wins over the query; conflicting values are `bad_param`.
    public func text(_ names: String...) throws(ProtocolError) -> String? {
        try text(names)
    }

    public func text(_ names: [String]) throws(ProtocolError) -> String? {
        var chosen: (name: String, value: [UInt8])?
        for name in names {
            guard let value = try resolved(name) else { continue }
            if let previous = chosen, previous.value != value {
                throw ProtocolError.bad(name, "conflicts with '\(previous.name)'")
            }
            chosen = (name, value)
        }
        guard let chosen else { return nil }
        guard let string = String(validating: chosen.value, as: UTF8.self) else {
            throw ProtocolError.bad(chosen.name, "is not valid UTF-8")
        }
        guard ChatText.isXMLSafe(string) else {
            throw ProtocolError.bad(chosen.name, "contains characters not allowed in XML")
        }
        return string
    }

    public func has(_ name: String) -> Bool { query[name] != nil || body[name] != nil }

    /// One name, body first. Repeats within a source must agree, in both sources:
    /// a query that contradicts itself is refused even when the body overrules it.
    func resolved(_ name: String) throws(ProtocolError) -> [UInt8]? {
        let fromBody = try Self.single(body[name], name)
        let fromQuery = try Self.single(query[name], name)
        return fromBody ?? fromQuery
    }

    static func single(_ values: [[UInt8]]?, _ name: String) throws(ProtocolError) -> [UInt8]? {
        guard let values, let first = values.first else { return nil }
        if values.dropFirst().contains(where: { $0 != first }) {
            throw ProtocolError.bad(name, "is repeated with different values")
        }
        return first
    }

    static func parse(_ raw: [UInt8], count: inout Int) throws(ProtocolError) -> [String: [[UInt8]]] {
        var result: [String: [[UInt8]]] = [:]
        guard !raw.isEmpty else { return result }
        for pair in raw.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            count += 1
            if count > Limits.maxParameterCount {
                throw ProtocolError(.tooLarge, "too many parameters (at most \(Limits.maxParameterCount))")
            }
            let eq = pair.firstIndex(of: UInt8(ascii: "="))
            let rawName = eq.map { pair[pair.startIndex..<$0] } ?? pair[...]
            let rawValue = eq.map { pair[pair.index(after: $0)...] } ?? []
            let name = try percentDecode(rawName)
            let value = try percentDecode(rawValue)
            if name.count > Limits.maxParameterBytes || value.count > Limits.maxParameterBytes {
                throw ProtocolError(.tooLarge, "a parameter is over \(Limits.maxParameterBytes) bytes")
            }
            // A name that is not UTF-8 cannot be one we know: ignore it like any unknown one.
            guard let key = String(validating: name, as: UTF8.self) else { continue }
            result[key, default: []].append(value)
        }
        return result
    }

    /// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte.
    static func percentDecode(_ raw: ArraySlice<UInt8>) throws(ProtocolError) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(raw.count)
        var i = raw.startIndex
        while i < raw.endIndex {
            let byte = raw[i]
            if byte == UInt8(ascii: "%") {
                guard i + 2 < raw.endIndex + 0, raw.index(i, offsetBy: 2) < raw.endIndex,
                    let hi = hexValue(raw[i + 1]), let lo = hexValue(raw[i + 2])
                else {
                    throw ProtocolError(.badParam, "broken percent-encoding")
                }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                i += 1
            }
        }
        return out
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
}
