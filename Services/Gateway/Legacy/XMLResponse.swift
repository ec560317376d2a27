import GatewayCore
import GeoChatDomain
import GeoChatLegacyProtocol
import HTTPTypes
import Hummingbird
import NIOCore

/// Responses in the contract's form: the XML declaration, `text/xml; charset=utf-8`,
/// and `Retry-After` where the client should come back later (the refusal's
/// own seconds for `rate_limited`, else one).
enum XMLResponse {
    static let retryAfter = HTTPField.Name("Retry-After")!

    /// Made once: a field checks its value when it is made.
    static let okHeaders: HTTPFields = [.contentType: LegacyXML.contentType]

    static func ok(_ xml: ByteBuffer) -> Response {
        Response(status: .ok, headers: okHeaders, body: .init(byteBuffer: xml))
    }

    static func error(_ error: ProtocolError) -> Response {
        var headers: HTTPFields = [.contentType: LegacyXML.contentType]
        if let seconds = error.retryAfterSeconds {
            headers[retryAfter] = String(seconds)
        } else if error.code == .unavailable || error.code == .rateLimited {
            headers[retryAfter] = "1"
        }
        return Response(
            status: HTTPResponse.Status(code: error.code.httpStatus), headers: headers,
            body: .init(byteBuffer: ByteBuffer(string: LegacyXML.error(error))))
    }
}
