import GeoChatDomain
import Hummingbird
import Logging
import HTTPTypes
import NIOCore

/// The legacy endpoints: `/chat.php`, `/add.php`, `/messages.php` (GET and
/// POST, under the configured prefix). Parsing and checks happen here; the
/// work happens in `LegacyHandler`.
struct LegacyRoutes: Sendable {
    let handler: LegacyHandler
    let settings: GatewaySettings
    let logger: Logger

    func register(on router: Router<BasicRequestContext>) {
        let roomCap = settings.roomCap
        let endpoints: [(String, @Sendable (FormParameters) throws(ProtocolError) -> LegacyRequest)] = [
            ("chat.php", { p throws(ProtocolError) in .chat(try ChatCommand.parse(p, roomCap: roomCap)) }),
            ("add.php", { p throws(ProtocolError) in try LegacyRequest.parseLobbyPost(p) }),
            ("messages.php", { p throws(ProtocolError) in try LegacyRequest.parseLobbyMessages(p) }),
        ]
        for (name, parse) in endpoints {
            let path = RouterPath(settings.pathPrefix + "/" + name)
            router.on(path, method: .get) { request, _ in await respond(to: request, parse) }
            router.on(path, method: .post) { request, _ in await respond(to: request, parse) }
        }
    }

    private func respond(
        to request: Request, _ parse: @Sendable (FormParameters) throws(ProtocolError) -> LegacyRequest
    ) async -> Response {
        do {
            let body = try await formBody(request)
            let parameters = try FormParameters(query: Array((request.uri.query ?? "").utf8), body: body)
            let legacy = try parse(parameters)
            return XMLResponse.ok(try await handler.handle(legacy))
        } catch {
            if error.code == .unavailable {
                logger.warning("answered unavailable", metadata: ["path": "\(request.uri.path)"])
            }
            return XMLResponse.error(error)
        }
    }

    /// The form body of a POST, at most 64 KiB. Other content types carry no parameters.
    private func formBody(_ request: Request) async throws(ProtocolError) -> [UInt8] {
        guard request.method == .post else { return [] }
        if let type = request.headers[.contentType],
            !type.lowercased().hasPrefix("application/x-www-form-urlencoded")
        {
            return []
        }
        var request = request
        do {
            let buffer = try await request.collectBody(upTo: Limits.maxBodyBytes)
            return Array(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw ProtocolError(.tooLarge, "the request body is over \(Limits.maxBodyBytes) bytes")
        } catch {
            throw ProtocolError(.badParam, "the request body could not be read")
        }
    }
}

/// Responses in the contract's form: the XML declaration, `text/xml; charset=utf-8`,
/// and `Retry-After` where the client should come back later.
enum XMLResponse {
    static let retryAfter = HTTPField.Name("Retry-After")!

    static func ok(_ xml: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: LegacyXML.contentType],
            body: .init(byteBuffer: ByteBuffer(string: xml)))
    }

    static func error(_ error: ProtocolError) -> Response {
        var headers: HTTPFields = [.contentType: LegacyXML.contentType]
        if error.code == .unavailable || error.code == .rateLimited { headers[retryAfter] = "1" }
        return Response(
            status: HTTPResponse.Status(code: error.code.httpStatus), headers: headers,
            body: .init(byteBuffer: ByteBuffer(string: LegacyXML.error(error))))
    }
}
