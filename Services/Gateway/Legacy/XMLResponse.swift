import GeoChatDomain
import GeoChatLegacyProtocol
import HTTPTypes
import Hummingbird
import NIOCore
import GatewayCore

/// Responses in the contract's form: the XML declaration, `text/xml; charset=utf-8`,
/// and `Retry-After` where the client should come back later.
enum XMLResponse {
    static let retryAfter = HTTPField.Name("Retry-After")!

    static func ok(_ xml: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: LegacyXML.contentType],
            body: .init(byteBuffer: ByteBuffer(string: xml)))
    }

    /// `429 rate_limited` with the seconds until the client may try again.
    static func rateLimited(_ refusal: RateLimiter.Refusal) -> Response {
        let error = ProtocolError(.rateLimited, "too many requests; try again in \(refusal.retryAfterSeconds) s")
        var response = Self.error(error)
        response.headers[retryAfter] = String(refusal.retryAfterSeconds)
        return response
    }

    static func error(_ error: ProtocolError) -> Response {
        var headers: HTTPFields = [.contentType: LegacyXML.contentType]
        if error.code == .unavailable || error.code == .rateLimited { headers[retryAfter] = "1" }
        return Response(
            status: HTTPResponse.Status(code: error.code.httpStatus), headers: headers,
            body: .init(byteBuffer: ByteBuffer(string: LegacyXML.error(error))))
    }
}
