import Foundation
import GatewayCore
import GeoChatDomain
import HTTPTypes
import Hummingbird
import NIOCore

/// An error as the JSON API answers it: `application/problem+json` (RFC 9457),
/// with the protocol's error code, so clients of both APIs act on the same codes.
struct Problem: Encodable {
    var type: String
    var title: String
    var status: Int
    var detail: String
    var code: String

    static let contentType = "application/problem+json"

    init(_ error: ProtocolError) {
        code = error.code.rawValue
        type = "urn:geochat:problem:" + code
        title = Self.title(error.code)
        status = Self.status(error.code)
        detail = error.text
    }

    /// The legacy status, except a missing or unknown session: the API takes it
    /// from `Authorization`, so it is `401` (with `WWW-Authenticate`), not `403`.
    static func status(_ code: ProtocolError.Code) -> Int {
        code == .invalidSession ? 401 : code.httpStatus
    }

    static func title(_ code: ProtocolError.Code) -> String {
        switch code {
        case .missingParam: "A required parameter is missing"
        case .badParam: "A parameter is not valid"
        case .invalidNick: "The nickname is not valid"
        case .empty: "A text is empty"
        case .tooLong: "A text is too long"
        case .unknownCommand: "No such operation"
        case .unsupportedVersion: "Unsupported version"
        case .invalidSession: "The session is unknown or has ended"
        case .banned: "Banned"
        case .noSuchChat: "No such chat room"
        case .tooLarge: "The request is too large"
        case .rateLimited: "Too many requests"
        case .unavailable: "Temporarily unavailable"
        }
    }

    func response(retryAfterSeconds: Int? = nil) -> Response {
        var headers: HTTPFields = [.contentType: Self.contentType]
        if let retryAfterSeconds {
            headers[XMLResponse.retryAfter] = String(retryAfterSeconds)
        } else if code == ProtocolError.Code.unavailable.rawValue || code == ProtocolError.Code.rateLimited.rawValue {
            headers[XMLResponse.retryAfter] = "1"
        }
        if status == 401 { headers[.wwwAuthenticate] = "Bearer" }
        return Response(
            status: HTTPResponse.Status(code: status), headers: headers,
            body: .init(byteBuffer: APIJSON.encode(self)))
    }
}
