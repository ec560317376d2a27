import Foundation
import GatewayCore
import GeoChatDomain
import HTTPTypes
import Hummingbird
import NIOCore

/// JSON out, JSON in: one encoder setting for every answer.
enum APIJSON {
    static let contentType = "application/json"

    static func encode(_ value: some Encodable) -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The API's values always encode; a failure here is a programming error.
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return ByteBuffer(bytes: data)
    }

    static func text(_ value: some Encodable) -> String {
        String(buffer: encode(value))
    }

    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: contentType], body: .init(byteBuffer: encode(value)))
    }

    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws(ProtocolError) -> T {
        guard !body.isEmpty else { throw ProtocolError(.missingParam, "the request needs a JSON body") }
        guard let object = RequestBody.jsonObject(body) else {
            throw ProtocolError(.badParam, "the body is not a JSON object")
        }
        if let null = RequestBody.nullField(in: object) {
            throw ProtocolError(.badParam, "'\(null)' is null; leave it out instead")
        }
        do {
            return try JSONDecoder().decode(type, from: Data(body))
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context) {
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw ProtocolError(.badParam, "'\(field)' has the wrong type")
        } catch {
            throw ProtocolError(.badParam, "the body is not a JSON object of the expected form")
        }
    }
}
