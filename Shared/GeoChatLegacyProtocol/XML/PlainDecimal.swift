import GeoChatDomain

/// Writes a coordinate in plain decimal notation, shortest form that reads back
/// to the same Double (`0.8`, `0.0000001`, `0`, `1`), never with an exponent.
public enum PlainDecimal {
    public static func format(_ value: Double) -> String {
        var out: [UInt8] = []
        append(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `format(value)`'s bytes, appended with no `String` of their own: a
    /// `chats` answer writes a thousand coordinates, and a coordinate's
    /// shortest digits (`0.5123456789012346`) are too long for a `String`
    /// that lives without the heap.
    public static func append(_ value: Double, to out: inout [UInt8]) {
        if value == 0 {  // also -0
            out.append(UInt8(ascii: "0"))
            return
        }
        // Swift prints the shortest round-tripping digits, here straight into `out`.
        let start = out.count
        var stream = AppendingStream()
        swap(&stream.bytes, &out)
        value.write(to: &stream)
        swap(&stream.bytes, &out)
        let end = out.count
        guard let e = out[start...].firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else {
            if end - start >= 2 && out[end - 2] == UInt8(ascii: ".") && out[end - 1] == UInt8(ascii: "0") {
                out.removeLast(2)
            }
            return
        }
        let mantissa = String(decoding: out[start..<e], as: UTF8.self)
        let exponent = Int(String(decoding: out[(e + 1)..<end], as: UTF8.self))!
        out.removeSubrange(start...)
        out.append(contentsOf: expand(mantissa: mantissa, exponent: exponent).utf8)
    }

    /// A stream onto bytes. A number's `write(to:)` hands its digits to
    /// `_writeASCII` from a buffer on the stack; the default would make a `String`.
    private struct AppendingStream: TextOutputStream {
        var bytes: [UInt8] = []
        mutating func write(_ string: String) { bytes.append(contentsOf: string.utf8) }
        mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: buffer) }
    }

    /// "1.25", -7  ->  "0.000000125";  "1.5", 20 -> "150000000000000000000".
    static func expand(mantissa: String, exponent: Int) -> String {
        var negative = false
        var m = Substring(mantissa)
        if m.first == "-" {
            negative = true
            m = m.dropFirst()
        }
        let parts = m.split(separator: ".", omittingEmptySubsequences: false)
        let intPart = String(parts[0])
        let fracPart = parts.count > 1 ? String(parts[1]) : ""
        let digits = intPart + fracPart
        let pointPosition = intPart.count + exponent  // digits before the point
        var result: String
        if pointPosition <= 0 {
            result = "0." + String(repeating: "0", count: -pointPosition) + digits
        } else if pointPosition >= digits.count {
            result = digits + String(repeating: "0", count: pointPosition - digits.count)
        } else {
            let idx = digits.index(digits.startIndex, offsetBy: pointPosition)
            result = digits[..<idx] + "." + digits[idx...]
        }
        if result.contains(".") {
            while result.hasSuffix("0") { result.removeLast() }
            if result.hasSuffix(".") { result.removeLast() }
        }
        return negative ? "-" + result : result
    }
}
