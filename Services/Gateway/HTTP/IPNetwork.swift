import Foundation
import GatewayCore
import GeoChatRuntime
import HTTPTypes
import NIOCore

/// A CIDR (`10.0.0.0/8`, `fd00::/8`) or one address.
struct IPNetwork: Sendable {
    let base: IPAddress
    let prefixLength: Int

    init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let base = IPAddress(String(parts[0])) else { return nil }
        let bits = base.bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...bits).contains(length) else { return nil }
            prefixLength = length
        } else {
            prefixLength = bits
        }
        self.base = base
    }

    func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == base.bytes.count else { return false }
        var left = prefixLength
        for (a, b) in zip(address.bytes, base.bytes) where left > 0 {
            let mask: UInt8 = left >= 8 ? 0xFF : ~(0xFF >> UInt8(left))
            if a & mask != b & mask { return false }
            left -= 8
        }
        return true
    }
}
