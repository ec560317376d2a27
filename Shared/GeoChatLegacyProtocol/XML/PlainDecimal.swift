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
    /// `chats` answer writes a thousand coordinates.
    public static func append(_ value: Double, to out: inout [UInt8]) {
        if value == 0 {  // also -0
            out.append(UInt8(ascii: "0"))
            return
        }
        var text = value.description  // Swift prints the shortest round-tripping digits
        let plain = text.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else { return false }
            let end = bytes.count
            let wholeNumber = end >= 2 && bytes[end - 2] == UInt8(ascii: ".") && bytes[end - 1] == UInt8(ascii: "0")
            out.append(contentsOf: bytes[..<(wholeNumber ? end - 2 : end)])
            return true
        }
        guard !plain else { return }
        let e = text.firstIndex { $0 == "e" || $0 == "E" }!
        out.append(contentsOf: expand(mantissa: String(text[..<e]), exponent: Int(text[text.index(after: e)...])!).utf8)
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
