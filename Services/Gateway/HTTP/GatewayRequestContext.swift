import GatewayCore
import Hummingbird
import NIOCore

/// The gateway's request context: the basic one plus the client's address,
/// which the per-address rate limits key on.
struct GatewayRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The peer of the TCP connection (the load balancer's, behind one).
    let remoteAddress: SocketAddress?
    /// The connection, for a push stream to close when its subscriber stalls.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }

    /// The client's address as the limits see it (`ClientAddresses`: the peer,
    /// or the forwarded client behind a trusted proxy; IPv6 by /64).
    func clientAddress(_ request: Request, _ addresses: ClientAddresses) -> String {
        clientAddressReader(request, addresses)()
    }

    /// The same, worked out when called: it holds only the peer and the
    /// headers, not the request and its context (every poll makes one).
    func clientAddressReader(_ request: Request, _ addresses: ClientAddresses) -> @Sendable () -> String {
        let peer = remoteAddress
        let headers = request.headers
        return { addresses.key(peer: peer?.ipAddress, headers: headers) }
    }
}
