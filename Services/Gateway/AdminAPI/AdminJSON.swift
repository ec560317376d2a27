import Foundation
import GatewayCore
import GeoChatAdminAPI
import GeoChatBus
import GeoChatDomain
import HTTPTypes
import Hummingbird
import NIOCore

/// JSON in and out of the admin API.
enum AdminJSON {
    static let maxBodyBytes = 16 * 1024
    /// How long an admin request body may take to arrive.
    static let bodyTimeout: Duration = .seconds(10)

    static func response<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        var headers: HTTPFields = [.contentType: "application/json"]
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func failure(_ failure: AdminFailure) -> Response {
        var response = response(
            AdminAPI.ErrorResponse(code: failure.code, message: failure.message), status: failure.status)
        if failure.status == .unauthorized { response.headers[.wwwAuthenticate] = "Bearer realm=\"geochat-admin\"" }
        if failure.status == .serviceUnavailable || failure.status == .tooManyRequests {
            response.headers[HTTPField.Name("Retry-After")!] = "1"
        }
        return response
    }

    /// The request's JSON body as `T`, or a 400 that says what is wrong.
    static func body<T: Decodable>(_ type: T.Type, of request: Request) async throws(AdminFailure) -> T {
        let request = request
        let buffer: ByteBuffer
        do {
            // A trickled body is cut off: an admin's JSON is small.
            buffer = try await withDeadline(bodyTimeout) {
                var request = request
                return try await request.collectBody(upTo: maxBodyBytes)
            }
        } catch is NIOTooManyBytesError {
            throw AdminFailure(
                status: .contentTooLarge, code: "too_large", message: "the body is over \(maxBodyBytes) bytes")
        } catch is DeadlineExceeded {
            throw AdminFailure(
                status: .requestTimeout, code: "timeout", message: "the body did not arrive within \(bodyTimeout)")
        } catch {
            throw .badRequest("the body could not be read")
        }
        let bytes = Array(buffer.readableBytesView)
        if let object = RequestBody.jsonObject(bytes), let null = RequestBody.nullField(in: object) {
            throw .badRequest("'\(null)' is null; leave it out instead")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch let DecodingError.keyNotFound(key, _) {
            throw .badRequest("the body lacks '\(key.stringValue)'")
        } catch let DecodingError.typeMismatch(_, context) {
            throw .badRequest("'\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type")
        } catch {
            throw .badRequest("the body is not the JSON this endpoint takes")
        }
    }

    /// An optional integer query parameter within `range`.
    static func int(_ request: Request, _ name: String, default value: Int, range: ClosedRange<Int>)
        throws(AdminFailure) -> Int
    {
        guard let raw = request.uri.queryParameters[name[...]] else { return value }
        guard let parsed = Int(String(raw)), range.contains(parsed) else {
            throw .badRequest("'\(name)' must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return parsed
    }

    static func text(_ request: Request, _ name: String) -> String? {
        request.uri.queryParameters[name[...]].map(String.init)
    }
}
