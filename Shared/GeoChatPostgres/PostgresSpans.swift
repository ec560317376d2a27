import Tracing

/// The client spans of PostgreSQL calls (`MeasuredPostgresClient`), described
/// as OpenTelemetry's database conventions say. A statement's span is named
/// after its first keyword (`SELECT`, `INSERT`, `WITH`, …) and carries its text
/// as written, with `$n` for every bound value (PostgresNIO binds what a store
/// interpolates), so no value of a user's ever reaches a trace. Every span
/// names the store's file and line; a transaction's statements are its
/// children (`TracedConnection`).
enum PostgresSpans {
    /// `parent`: the current span's context unless given (a transaction's statements).
    static func start(
        _ kind: String, statement: String?, database: String?, file: String, line: Int,
        parent: InstrumentationContext? = nil
    ) -> any Span {
        let operation = statement.map(firstKeyword) ?? kind
        let span = startSpan(
            statement == nil ? "PostgreSQL \(kind)" : operation,
            context: parent ?? InstrumentationContext.current ?? .topLevel, ofKind: .client)
        guard span.isRecording else { return span }
        span.attributes["db.system.name"] = "postgresql"
        span.attributes["db.operation.name"] = operation
        if let statement { span.attributes["db.query.text"] = statement }
        if let database { span.attributes["db.namespace"] = database }
        span.attributes["code.file.path"] = file
        span.attributes["code.line.number"] = line
        return span
    }

    static func failed(_ span: any Span, _ error: any Error) {
        guard span.isRecording else { return }
        // PostgresNIO's errors print no server detail unless asked (`String(reflecting:)`): a
        // statement's bound values stay out.
        span.setStatus(SpanStatus(code: .error, message: "\(type(of: error))"))
    }

    /// `SELECT` of `  select …`, `WITH` of `WITH moved AS (…)`: the operation a span is named after.
    static func firstKeyword(_ statement: String) -> String {
        let word = statement.drop { $0.isWhitespace || $0 == "(" }.prefix { $0.isLetter }
        return word.isEmpty ? "statement" : word.uppercased()
    }
}
