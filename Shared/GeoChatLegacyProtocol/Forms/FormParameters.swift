import GeoChatDomain

/// The parameters of one legacy request: query string and form body, parsed by
/// the contract's rules (sections 1, 5 and 7).
///
/// Parsing checks what applies to every parameter (percent-encoding, the 4 KiB
/// bound, counts); a value's text rules (UTF-8, XML characters, conflicts) are
/// checked when a command reads it, because unknown parameters are ignored.
public struct FormParameters: Sendable {
    /// Every parameter as sent, in order: its decoded name and value as ranges
    /// of `bytes`, and whether the body carried it. A request has a handful, so
    /// a lookup scans them: no dictionary, no hashing, three allocations a
    /// request (the poll path's parse was 2.8 µs with a dictionary of arrays).
    struct Field: Sendable {
        var name: Range<Int>
        var value: Range<Int>
        var inBody: Bool
    }
    var bytes: [UInt8] = []
    var fields: [Field] = []

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
        // Decoding never lengthens: the raw sizes bound the decoded bytes.
        bytes.reserveCapacity(query.count + body.count)
        try parse(query, inBody: false)
        try parse(body, inBody: true)
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

    public func text(_ name: String) throws(ProtocolError) -> String? {
        guard let value = try resolved(name) else { return nil }
        return try string(value, name)
    }

    public func text(_ names: [String]) throws(ProtocolError) -> String? {
        var chosen: (name: String, value: Range<Int>)?
        for name in names {
            guard let value = try resolved(name) else { continue }
            if let previous = chosen, !bytes[previous.value].elementsEqual(bytes[value]) {
                throw ProtocolError.bad(name, "conflicts with '\(previous.name)'")
            }
            chosen = (name, value)
        }
        guard let chosen else { return nil }
        return try string(chosen.value, chosen.name)
    }

    public func has(_ name: String) -> Bool { fields.contains { named($0, name) } }

    /// A value as text: UTF-8 holding only characters XML allows.
    private func string(_ value: Range<Int>, _ name: String) throws(ProtocolError) -> String {
        let string = bytes.withUnsafeBufferPointer { all -> String? in
            let slice = UnsafeBufferPointer(rebasing: all[value])
            // ASCII is UTF-8: decoding it needs no validation (nearly every value;
            // the generic validating initializer asks for type metadata each call).
            if slice.allSatisfy({ $0 < 0x80 }) { return String(decoding: slice, as: UTF8.self) }
            return String(validating: slice, as: UTF8.self)
        }
        guard let string else { throw ProtocolError.bad(name, "is not valid UTF-8") }
        guard ChatText.isXMLSafe(string) else {
            throw ProtocolError.bad(name, "contains characters not allowed in XML")
        }
        return string
    }

    /// Names compare byte for byte (as PHP's `$_GET` keys do). A name that is
    /// not UTF-8 never equals one we ask for: it is ignored like any unknown one.
    private func named(_ field: Field, _ name: String) -> Bool {
        var name = name
        guard field.name.count == name.utf8.count else { return false }
        return name.withUTF8 { wanted in
            bytes.withUnsafeBufferPointer { UnsafeBufferPointer(rebasing: $0[field.name]).elementsEqual(wanted) }
        }
    }

    /// One name, body first. Repeats within a source must agree, in both sources:
    /// a query that contradicts itself is refused even when the body overrules it.
    func resolved(_ name: String) throws(ProtocolError) -> Range<Int>? {
        var fromBody: Range<Int>?
        var fromQuery: Range<Int>?
        for field in fields where named(field, name) {
            let first = field.inBody ? fromBody : fromQuery
            if let first {
                guard bytes[first].elementsEqual(bytes[field.value]) else {
                    throw ProtocolError.bad(name, "is repeated with different values")
                }
            } else if field.inBody {
                fromBody = field.value
            } else {
                fromQuery = field.value
            }
        }
        return fromBody ?? fromQuery
    }

    private mutating func parse(_ raw: [UInt8], inBody: Bool) throws(ProtocolError) {
        guard !raw.isEmpty else { return }
        if fields.isEmpty { fields.reserveCapacity(8) }
        // Scanned for `&` in place (no array of slices per request); empty pairs are skipped.
        var start = raw.startIndex
        while start < raw.endIndex {
            let end = raw[start...].firstIndex(of: UInt8(ascii: "&")) ?? raw.endIndex
            defer { start = end + 1 }
            guard end > start else { continue }
            let pair = raw[start..<end]
            if fields.count >= Limits.maxParameterCount {
                throw ProtocolError(.tooLarge, "too many parameters (at most \(Limits.maxParameterCount))")
            }
            let eq = pair.firstIndex(of: UInt8(ascii: "="))
            let rawName = eq.map { pair[pair.startIndex..<$0] } ?? pair[...]
            let rawValue = eq.map { pair[pair.index(after: $0)...] } ?? []
            let name = try Self.percentDecode(rawName, into: &bytes)
            let value = try Self.percentDecode(rawValue, into: &bytes)
            if name.count > Limits.maxParameterBytes || value.count > Limits.maxParameterBytes {
                throw ProtocolError(.tooLarge, "a parameter is over \(Limits.maxParameterBytes) bytes")
            }
            fields.append(Field(name: name, value: value, inBody: inBody))
        }
    }

    /// Decodes `raw` onto the end of `out`; the range it took there.
    static func percentDecode(_ raw: ArraySlice<UInt8>, into out: inout [UInt8]) throws(ProtocolError) -> Range<Int> {
        let start = out.count
        var i = raw.startIndex
        while i < raw.endIndex {
            let byte = raw[i]
            if byte == UInt8(ascii: "%") {
                guard raw.endIndex - i > 2, let hi = hexValue(raw[i + 1]), let lo = hexValue(raw[i + 2]) else {
                    throw ProtocolError(.badParam, "broken percent-encoding")
                }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                i += 1
            }
        }
        return start..<out.count
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
