import Foundation
import GatewayCore
import GeoChatRuntime
import HTTPTypes
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Who a request comes from, as the per-address limits count it.
///
/// The TCP peer, unless the peer is one of the configured trusted proxies
/// (`GEOCHAT_TRUSTED_PROXIES`, CIDRs): then the nearest address in the one
/// header those proxies write (`GEOCHAT_CLIENT_ADDRESS_HEADER`) that is not
/// itself a trusted proxy, read from the right, since only the entries our own
/// proxies appended can be believed. Every other forwarding header is ignored:
/// a proxy that appends to `X-Forwarded-For` passes a client's own `Forwarded`
/// through untouched. A header from any other peer is ignored too (anyone can
/// send one). IPv6 clients count by their /64: one subscriber's network is one
/// key, not 2^64 of them.
struct ClientAddresses: Sendable {
    /// The header the trusted proxies write.
    enum Header: String, Sendable, CaseIterable {
        /// Appended to by nginx (`$proxy_add_x_forwarded_for`), ingress-nginx,
        /// HAProxy (`option forwardfor`) and cloud load balancers.
        case xForwardedFor = "x-forwarded-for"
        /// RFC 7239's `for=` parameters (Envoy, some CDNs).
        case forwarded
        /// One address that the proxy sets, replacing the client's (`proxy_set_header X-Real-IP $remote_addr`).
        case xRealIP = "x-real-ip"
    }

    let trustedProxies: [IPNetwork]
    let header: Header

    init(trustedProxies: [IPNetwork] = [], header: Header = .xForwardedFor) {
        self.trustedProxies = trustedProxies
        self.header = header
    }

    /// `trusted.proxies`: comma-separated CIDRs or addresses (`10.0.0.0/8, ::1`);
    /// `client.address.header`: `x-forwarded-for` (default), `forwarded` or `x-real-ip`.
    init(_ configuration: Configuration) throws {
        let name = configuration.string("client.address.header", default: Header.xForwardedFor.rawValue)
        guard let header = Header(rawValue: name.lowercased()) else {
            throw ConfigurationError(
                key: "client.address.header", value: name,
                expected: Header.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self.header = header
        let raw = configuration.string("trusted.proxies", default: "")
        trustedProxies = try raw.split(separator: ",").map { item in
            let text = item.trimmingCharacters(in: .whitespaces)
            guard let network = IPNetwork(text) else {
                throw ConfigurationError(key: "trusted.proxies", value: text, expected: "an IP address or CIDR")
            }
            return network
        }
    }

    /// The limits' key for a request from `peer` with these headers.
    func key(peer: String?, headers: HTTPFields) -> String {
        guard let peer, let peerAddress = IPAddress(peer) else { return "unknown" }
        guard isTrusted(peerAddress) else { return peerAddress.limitKey }
        var hops = Self.forwardedChain(headers, header)
        while let last = hops.popLast() {
            guard let address = IPAddress(last) else { return peerAddress.limitKey }  // garbage: count the proxy
            if !isTrusted(address) { return address.limitKey }
        }
        return peerAddress.limitKey
    }

    func isTrusted(_ address: IPAddress) -> Bool { trustedProxies.contains { $0.contains(address) } }

    /// The client chain, nearest last, from the one header the proxies write:
    /// `Forwarded`'s `for=` values (RFC 7239), `X-Forwarded-For`'s addresses,
    /// or `X-Real-IP`'s one. Ports and brackets go.
    static func forwardedChain(_ headers: HTTPFields, _ header: Header) -> [String] {
        switch header {
        case .xRealIP:
            // The proxy sets it; two of them mean the client sent one too and the proxy appended: take the last.
            return headers[values: .xRealIP].last.map { [$0.trimmingCharacters(in: .whitespaces)] } ?? []
        case .forwarded:
            return headers[values: .forwarded].joined(separator: ",").split(separator: ",").compactMap { element in
                for pair in element.split(separator: ";") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "for" else {
                        continue
                    }
                    var value = parts[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(
                        in: CharacterSet(charactersIn: "\""))
                    if value.hasPrefix("[") {
                        value = String(value.dropFirst().prefix { $0 != "]" })
                    } else if value.filter({ $0 == ":" }).count == 1 {
                        value = String(value.prefix { $0 != ":" })
                    }
                    return value
                }
                return nil
            }
        case .xForwardedFor:
            return headers[values: .xForwardedFor].joined(separator: ",").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
        }
    }
}

extension HTTPField.Name {
    static let forwarded = Self("Forwarded")!
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let xRealIP = Self("X-Real-IP")!
}
