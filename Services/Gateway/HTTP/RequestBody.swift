import GatewayCore
import GeoChatBus
import GeoChatDomain
import Hummingbird
import NIOCore

/// A request body, read with the limits every endpoint shares: at most
/// `Limits.maxBodyBytes`, and all of it within `timeout` (a client that
/// trickles its body is cut off: slowloris on the body).
enum RequestBody {
    static func collect(_ request: Request, timeout: Duration) async throws(ProtocolError) -> [UInt8] {
        let request = request
        do {
            let buffer = try await withDeadline(timeout) {
                var request = request
                return try await request.collectBody(upTo: Limits.maxBodyBytes)
            }
            return Array(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw ProtocolError(.tooLarge, "the request body is over \(Limits.maxBodyBytes) bytes")
        } catch is DeadlineExceeded {
            throw ProtocolError(.badParam, "the request body did not arrive in time")
        } catch {
            throw ProtocolError(.badParam, "the request body could not be read")
        }
    }
}
