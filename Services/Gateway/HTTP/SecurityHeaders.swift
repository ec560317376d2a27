import Hummingbird
import HTTPTypes

/// Headers on every answer of a gateway's listeners, errors and 404s included:
/// no type sniffing (an answer is only what its `Content-Type` says), no
/// framing (clickjacking of create and say), no referrer leaving the page, and
/// a Content-Security-Policy that lets the web map run its own files only
/// (no inline script; Leaflet positions tiles and markers with inline styles).
struct SecurityHeaders<Context: RequestContext>: RouterMiddleware {
    static var fields: HTTPFields {
        [
            .xContentTypeOptions: "nosniff",
            .referrerPolicy: "no-referrer",
            .xFrameOptions: "DENY",
            .contentSecurityPolicy: contentSecurityPolicy,
        ]
    }

    static var contentSecurityPolicy: String {
        [
            "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
            "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
        ].joined(separator: "; ")
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // The router's own answers (no such route, wrong method) get the headers too.
            response = try error.response(from: request, context: context)
        }
        for field in Self.fields where response.headers[field.name] == nil { response.headers.append(field) }
        return response
    }
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
    static let xFrameOptions = Self("X-Frame-Options")!
}
