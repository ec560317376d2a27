import GeoChatDomain

/// Writes a coordinate in plain decimal notation, shortest form that reads back
/// to the same Double (`0.8`, `0.0000001`, `0`, `1`), never with an exponent.
public enum PlainDecimal {
    public static func format(_ value: Double) -> String {
        if value == 0 { return "0" }  // also -0
        var text = value.description  // Swift prints the shortest round-tripping digits
        // Bytes, not Characters: a `chats` answer formats a thousand coordinates.
        var exponent: Int?
        var last: UInt8 = 0
        var beforeLast: UInt8 = 0
        text.withUTF8 { bytes in
            exponent = bytes.firstIndex { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
            if bytes.count >= 2 { (beforeLast, last) = (bytes[bytes.count - 2], bytes[bytes.count - 1]) }
        }
        if let exponent {
            let utf8 = text.utf8
            let e = utf8.index(utf8.startIndex, offsetBy: exponent)
            return expand(mantissa: String(text[..<e]), exponent: Int(text[text.index(after: e)...])!)
        }
        if beforeLast == UInt8(ascii: "."), last == UInt8(ascii: "0") { text.removeLast(2) }
        return text
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
