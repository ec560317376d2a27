import GeoChatBus
import GeoChatDomain
import GeoChatLegacyProtocol
import Hummingbird
import GeoChatRuntime
import Logging
import HTTPTypes
import NIOCore

/// The legacy endpoints: `/chat.php`, `/add.php`, `/messages.php` (GET and
/// POST, under the configured prefix). Parsing and checks happen here; the
/// work happens in `LegacyHandler`.
struct LegacyRoutes: Sendable {
    let handler: LegacyHandler
    let settings: GatewaySettings
    let limiter: RateLimiter
    let logger: Logger

    func register(on router: Router<GatewayRequestContext>) {
        let settings = settings
        let endpoints: [(String, @Sendable (FormParameters) throws(ProtocolError) -> LegacyRequest)] = [
            ("chat.php", { p throws(ProtocolError) in .chat(try ChatCommand.parse(p, roomCap: settings.roomCap)) }),
            ("add.php", { p throws(ProtocolError) in try LegacyRequest.parseLobbyPost(p) }),
            ("messages.php", { p throws(ProtocolError) in try LegacyRequest.parseLobbyMessages(p) }),
        ]
        for (name, parse) in endpoints {
            for prefix in Self.spellings(of: settings.pathPrefix) {
                let path = RouterPath(prefix + "/" + name)
                router.on(path, method: .get) { request, context in await respond(to: request, context, parse) }
                router.on(path, method: .post) { request, context in await respond(to: request, context, parse) }
            }
        }
    }

    /// The router matches paths as sent, and `~` (as in `/~rost/geochat`) is
    /// sent as `%7E` by some URL encoders; RFC 3986 makes them the same path.
    static func spellings(of prefix: String) -> [String] {
        guard prefix.contains("~") else { return [prefix] }
        let parts = prefix.split(separator: "~", omittingEmptySubsequences: false)
        return [prefix, parts.joined(separator: "%7E"), parts.joined(separator: "%7e")]
    }

    private func respond(
        to request: Request, _ context: GatewayRequestContext,
        _ parse: @Sendable (FormParameters) throws(ProtocolError) -> LegacyRequest
    ) async -> Response {
        let started = ContinuousClock.now
        var command = RequestMetrics.unparsed
        do throws(ProtocolError) {
            let query = request.uri.query ?? ""
            guard query.utf8.count <= Limits.maxQueryBytes else {
                throw ProtocolError(.tooLarge, "the query string is over \(Limits.maxQueryBytes) bytes")
            }
            let body = try await formBody(request)
            let parameters = try FormParameters(query: Array(query.utf8), body: body)
            let legacy = try parse(parameters)
            command = RequestMetrics.command(legacy)
            let client = ClientLimits(limiter: limiter, address: { context.clientAddress(request, settings.clientAddresses) })
            try handler.signOfLife(parameters.sessionHint(), client: client)
            if let refusal = limiter.admit(legacy, address: client.address) {
                RequestMetrics.record(command, since: started, error: ProtocolError(.rateLimited, "rate limited"))
                return XMLResponse.rateLimited(refusal)
            }
            let xml = try await handler.handle(legacy, admitCostlyRead: client)
            RequestMetrics.record(command, since: started)
            return XMLResponse.ok(xml)
        } catch {
            RequestMetrics.record(command, since: started, error: error)
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
        // The read is over before the answer goes out (the server drains the rest).
        return try await RequestBody.collect(request, timeout: settings.bodyTimeout)
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
