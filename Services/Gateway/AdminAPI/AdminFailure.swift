import Foundation
import GatewayCore
import GeoChatAdminAPI
import GeoChatBus
import GeoChatDomain
import HTTPTypes
import Hummingbird
import NIOCore

/// Why an admin request failed, as the HTTP status and the JSON error it answers.
struct AdminFailure: Error, Sendable {
    let status: HTTPResponse.Status
    let code: String
    let message: String

    static func unauthorized(_ message: String) -> AdminFailure {
        .init(status: .unauthorized, code: "unauthorized", message: message)
    }
    static func badRequest(_ message: String) -> AdminFailure {
        .init(status: .badRequest, code: "bad_request", message: message)
    }
    static func notFound(_ message: String) -> AdminFailure {
        .init(status: .notFound, code: "not_found", message: message)
    }
    static func tooManyLogins() -> AdminFailure {
        .init(status: .tooManyRequests, code: "rate_limited", message: "too many failed logins; try again in a minute")
    }

    /// A service's refusal: its code and text, with the status the contract gives the code.
    init(_ error: ProtocolError) {
        switch error.code {
        case .missingParam, .badParam: self.init(status: .badRequest, code: "bad_request", message: error.text)
        case .noSuchChat: self.init(status: .notFound, code: "not_found", message: error.text)
        default:
            self.init(
                status: HTTPResponse.Status(code: error.code.httpStatus), code: error.code.rawValue, message: error.text
            )
        }
    }

    init(status: HTTPResponse.Status, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }
}
