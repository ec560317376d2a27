import Foundation
import GatewayCore
import GeoChatRuntime
import HTTPTypes
import NIOCore

/// An IPv4 or IPv6 address as its bytes.
struct IPAddress: Hashable, Sendable {
    let bytes: [UInt8]

    init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            let all = withUnsafeBytes(of: &v6) { Array($0) }
            // An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is that IPv4 address.
            bytes = all[0..<10].allSatisfy { $0 == 0 } && all[10] == 0xFF && all[11] == 0xFF ? Array(all[12...]) : all
        } else {
            return nil
        }
    }

    /// IPv4: the address; IPv6: its /64, written `a:b:c:d::/64`.
    var limitKey: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 8, by: 2).map {
            String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
        }
        return groups.joined(separator: ":") + "::/64"
    }
}
