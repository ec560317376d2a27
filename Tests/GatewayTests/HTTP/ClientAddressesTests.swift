import GeoChatRuntime
import HTTPTypes
import Testing

@testable import Gateway
@testable import GatewayCore

/// Whose bucket a request counts against: the peer, or the client a trusted
/// proxy forwarded; a header from anyone else is ignored; IPv6 by /64.
@Suite struct ClientAddressesTests {
    func headers(_ fields: [(String, String)]) -> HTTPFields {
        var headers = HTTPFields()
        for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return headers
    }

    @Test func aForwardedHeaderFromAnUntrustedPeerIsIgnored() {
        let addresses = ClientAddresses(trustedProxies: [IPNetwork("10.0.0.0/8")!])
        let spoofed = headers([("X-Forwarded-For", "1.2.3.4"), ("Forwarded", "for=5.6.7.8")])
        #expect(addresses.key(peer: "198.51.100.7", headers: spoofed) == "198.51.100.7")
        #expect(
            ClientAddresses().key(peer: "127.0.0.1", headers: spoofed) == "127.0.0.1", "no proxy is trusted by default")
    }

    @Test func behindTrustedProxiesTheNearestUntrustedHopIsTheClient() {
        let addresses = ClientAddresses(trustedProxies: [IPNetwork("10.0.0.0/8")!, IPNetwork("192.0.2.1")!])
        // The client claims 1.2.3.4; our proxies appended what they saw.
        let chain = headers([("X-Forwarded-For", "1.2.3.4, 203.0.113.9, 192.0.2.1")])
        #expect(addresses.key(peer: "10.1.2.3", headers: chain) == "203.0.113.9")
        #expect(addresses.key(peer: "10.1.2.3", headers: headers([])) == "10.1.2.3", "no header: the proxy itself")
        #expect(addresses.key(peer: "10.1.2.3", headers: headers([("X-Forwarded-For", "not-an-ip")])) == "10.1.2.3")
        let rfc7239 = headers([("Forwarded", "for=\"[2001:db8:cafe::17]:4711\";proto=https, for=192.0.2.1")])
        let envoy = ClientAddresses(trustedProxies: addresses.trustedProxies, header: .forwarded)
        #expect(envoy.key(peer: "10.1.2.3", headers: rfc7239) == "2001:db8:cafe:0::/64")
    }

    /// nginx (`$proxy_add_x_forwarded_for`) appends the peer it saw to
    /// X-Forwarded-For and passes every other header through: a client's own
    /// `Forwarded: for=<anything>` must buy nothing, nor a client's X-Real-IP.
    @Test func behindAnAppendingProxyOnlyItsHeaderCounts() {
        let nginx = ClientAddresses(trustedProxies: [IPNetwork("10.0.0.0/8")!])
        for forged in ["for=1.1.1.1", "for=\"[2001:db8::1]\"", "for=10.9.9.9"] {
            let request = headers([
                ("Forwarded", forged), ("X-Real-IP", "9.9.9.9"), ("X-Forwarded-For", "evil, 203.0.113.9"),
            ])
            #expect(nginx.key(peer: "10.1.2.3", headers: request) == "203.0.113.9", "\(forged)")
        }
        // RFC 7239 proxies: X-Forwarded-For is the client's, Forwarded the proxy's.
        let envoy = ClientAddresses(trustedProxies: [IPNetwork("10.0.0.0/8")!], header: .forwarded)
        let request = headers([("X-Forwarded-For", "1.1.1.1"), ("Forwarded", "for=198.51.100.4;proto=https")])
        #expect(envoy.key(peer: "10.1.2.3", headers: request) == "198.51.100.4")
        // A proxy that sets X-Real-IP: the address it set, the client's own X-Forwarded-For ignored.
        let realIP = ClientAddresses(trustedProxies: [IPNetwork("10.0.0.0/8")!], header: .xRealIP)
        #expect(
            realIP.key(
                peer: "10.1.2.3", headers: headers([("X-Forwarded-For", "1.1.1.1"), ("X-Real-IP", "198.51.100.5")]))
                == "198.51.100.5")
        #expect(realIP.key(peer: "10.1.2.3", headers: headers([])) == "10.1.2.3")
    }

    @Test func ipv6CountsByItsSlash64AndMappedIPv4AsIPv4() {
        let addresses = ClientAddresses()
        #expect(
            addresses.key(peer: "2001:db8:1:2:aaaa::1", headers: HTTPFields())
                == addresses.key(peer: "2001:db8:1:2:ffff:ffff:ffff:ffff", headers: HTTPFields()))
        #expect(addresses.key(peer: "2001:db8:1:3::1", headers: HTTPFields()) == "2001:db8:1:3::/64")
        #expect(addresses.key(peer: "::ffff:192.0.2.5", headers: HTTPFields()) == "192.0.2.5")
    }

    @Test func networksMatchByPrefixAndBadSettingsAreRefused() throws {
        #expect(IPNetwork("10.0.0.0/8")!.contains(IPAddress("10.255.1.1")!))
        #expect(!IPNetwork("10.0.0.0/8")!.contains(IPAddress("11.0.0.1")!))
        #expect(IPNetwork("fd00::/8")!.contains(IPAddress("fd12::1")!))
        #expect(!IPNetwork("fd00::/8")!.contains(IPAddress("10.0.0.1")!))
        #expect(IPNetwork("10.0.0.0/33") == nil && IPNetwork("example.com") == nil)
        let configured = try ClientAddresses(
            Configuration(arguments: [], environment: ["GEOCHAT_TRUSTED_PROXIES": "10.0.0.0/8, ::1"]))
        #expect(configured.trustedProxies.count == 2)
        #expect(throws: ConfigurationError.self) {
            try ClientAddresses(
                Configuration(arguments: [], environment: ["GEOCHAT_TRUSTED_PROXIES": "10.0.0.0/8,bogus"]))
        }
        let header = try ClientAddresses(
            Configuration(arguments: [], environment: ["GEOCHAT_CLIENT_ADDRESS_HEADER": "Forwarded"]))
        #expect(header.header == .forwarded)
        #expect(throws: ConfigurationError.self) {
            try ClientAddresses(Configuration(arguments: [], environment: ["GEOCHAT_CLIENT_ADDRESS_HEADER": "via"]))
        }
    }
}
