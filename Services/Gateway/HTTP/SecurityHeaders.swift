import GatewayCore
import HTTPTypes
import Hummingbird

/// Headers on every answer of a gateway's listeners, errors and 404s included:
/// no type sniffing (an answer is only what its `Content-Type` says), no
/// framing (clickjacking of create and say), no referrer leaving the page, and
/// a Content-Security-Policy that lets the web map run its own files only
/// (no inline script; Leaflet positions tiles and markers with inline styles).
struct SecurityHeaders<Context: RequestContext>: RouterMiddleware {
    let fields: HTTPFields

    /// `imageOrigins` and `connectOrigins`: what the page may load besides its
    /// own files (the operator's tile server, their geocoder; `MapSettings`).
    init(imageOrigins: [String] = [], connectOrigins: [String] = []) {
        fields = [
            .xContentTypeOptions: "nosniff",
            .referrerPolicy: "no-referrer",
            .xFrameOptions: "DENY",
            .contentSecurityPolicy: Self.contentSecurityPolicy(
                imageOrigins: imageOrigins, connectOrigins: connectOrigins),
        ]
    }

    static func contentSecurityPolicy(imageOrigins: [String] = [], connectOrigins: [String] = []) -> String {
        [
            "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'",
            (["img-src 'self' data:"] + imageOrigins).joined(separator: " "),
            (["connect-src 'self'"] + connectOrigins).joined(separator: " "),
            "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
        ].joined(separator: "; ")
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // The router's own answers (no such route, wrong method) get the headers too.
            response = try error.response(from: request, context: context)
        }
        // Room for them at once: appended one by one, the list would grow two or three times.
        response.headers.reserveCapacity(response.headers.count + fields.count)
        for field in fields where response.headers[field.name] == nil { response.headers.append(field) }
        return response
    }
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
    static let xFrameOptions = Self("X-Frame-Options")!
}
