import Foundation
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

    /// The body as a JSON object, if it is one.
    static func jsonObject(_ body: [UInt8]) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
    }

    /// Neither API has a nullable input: a field sent as null is refused, not taken as absent (as a
    /// decoder would take it). The first such field of the object, as a dotted path; nil if none.
    static func nullField(in object: [String: Any], at path: String = "") -> String? {
        for (key, value) in object.sorted(by: { $0.key < $1.key }) {
            if value is NSNull { return path + key }
            if let inner = value as? [String: Any], let found = nullField(in: inner, at: path + key + ".") {
                return found
            }
        }
        return nil
    }
}
