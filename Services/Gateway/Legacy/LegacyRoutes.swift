import GatewayCore
import GeoChatBus
import GeoChatDomain
import GeoChatLegacyProtocol
import GeoChatRuntime
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The legacy endpoints: `/chat.php`, `/add.php`, `/messages.php` (GET and
/// POST, under the configured prefix). Parsing and checks happen here; the
/// work happens in `LegacyHandler`.
///
/// A class: every request's handler holds it, and copying a struct of the
/// settings would retain each of their strings per request.
final class LegacyRoutes: Sendable {
    let handler: LegacyHandler
    let settings: GatewaySettings
    /// The sequence every chat request goes through (built once, shared with the JSON API).
    let requests: ChatRequests

    init(handler: LegacyHandler, settings: GatewaySettings, requests: ChatRequests) {
        self.handler = handler
        self.settings = settings
        self.requests = requests
    }

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
                router.on(path, method: .get) { [self] request, context in await respond(to: request, context, parse) }
                router.on(path, method: .post) { [self] request, context in await respond(to: request, context, parse) }
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
        await requests.serve(
            request, context, unread: RequestMetrics.unparsed, answer: XMLResponse.ok, refusal: XMLResponse.error
        ) { () async throws(ProtocolError) -> ChatRequests.Call<ByteBuffer> in
            let query = request.uri.query ?? ""
            guard query.utf8.count <= Limits.maxQueryBytes else {
                throw ProtocolError(.tooLarge, "the query string is over \(Limits.maxQueryBytes) bytes")
            }
            let body = request.method == .post ? try await formBody(request) : []
            let parameters = try FormParameters(query: Array(query.utf8), body: body)
            let legacy = try parse(parameters)
            // A command that names a session has read and checked it already.
            return .init(name: legacy.name, session: legacy.session ?? parameters.sessionHint()) {
                [handler] client async throws(ProtocolError) in try await handler.handle(legacy, client: client)
            }
        }
    }

    /// The form body of a POST, at most 64 KiB. Other content types carry no parameters.
    private func formBody(_ request: Request) async throws(ProtocolError) -> [UInt8] {
        if let type = request.headers[.contentType],
            !type.lowercased().hasPrefix("application/x-www-form-urlencoded")
        {
            return []
        }
        // The read is over before the answer goes out (the server drains the rest).
        return try await RequestBody.collect(request, timeout: settings.bodyTimeout)
    }
}
