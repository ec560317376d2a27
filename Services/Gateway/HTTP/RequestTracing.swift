import HTTPTypes
import Hummingbird
import Tracing

/// A server span per request (docs/operations.md, "Traces"), the root of the
/// trace the request's commands carry through Kafka — or the child of the
/// caller's, when it sends a W3C `traceparent`. It records the method, the
/// route and the status: never the query string or the body (the phones'
/// protocol carries its session ids, bearer secrets, and what people write in
/// them), nor the client's address. The probes and the metrics are not traced.
/// A push stream's span ends when its head is sent, not with the stream.
struct RequestTracing<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        switch request.uri.path {
        case "/health", "/ready", "/status", "/metrics": return try await next(request, context)
        default: break
        }
        var parent = InstrumentationContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &parent, using: FieldExtractor())
        let method = request.method.rawValue
        let span = startSpan("\(method) \(request.uri.path)", context: parent, ofKind: .server)
        defer { span.end() }
        if span.isRecording {
            span.attributes["http.request.method"] = method
            span.attributes["url.path"] = request.uri.path
        }
        do {
            let response = try await InstrumentationContext.$current.withValue(span.context) {
                try await next(request, context)
            }
            describe(span, method: method, route: context.endpointPath, status: response.status)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            describe(span, method: method, route: context.endpointPath, status: status)
            throw error
        }
    }

    private func describe(_ span: any Span, method: String, route: String?, status: HTTPResponse.Status) {
        guard span.isRecording else { return }
        if let route {
            // The route's pattern (`/api/v1/rooms/{room}/messages`), not the path's ids.
            span.operationName = "\(method) \(route)"
            span.attributes["http.route"] = route
        }
        span.attributes["http.response.status_code"] = status.code
        if status.code >= 500 { span.setStatus(SpanStatus(code: .error)) }
    }

    /// The caller's `traceparent` and `tracestate`, as the tracer asks for them.
    struct FieldExtractor: Extractor {
        func extract(key: String, from fields: HTTPFields) -> String? {
            HTTPField.Name(key).flatMap { fields[$0] }
        }
    }
}
