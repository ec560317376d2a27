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
        addresses.key(peer: remoteAddress?.ipAddress, headers: request.headers)
    }
}
