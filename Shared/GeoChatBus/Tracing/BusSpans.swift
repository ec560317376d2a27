import GeoChatDomain
import GeoChatKafka
import Tracing

/// The bus's spans, named and described as OpenTelemetry's messaging
/// conventions say: a command's `send` on the requester (until its reply
/// came, or its deadline passed) and its `process` on the owner (the handler,
/// and so the owner's PostgreSQL statements, inside it). Attributes are only
/// worked out for a span that records (never while tracing is off), and carry
/// names, topics and correlation ids, never a command's fields.
public enum BusSpans {
    /// A command's send, child of the current span (the gateway's HTTP request).
    static func send(_ command: String, topic: String, correlationID: String, oneWay: Bool = false) -> any Span {
        let span = startSpan("send \(command)", ofKind: .producer)
        if span.isRecording {
            span.attributes = attributes(command: command, topic: topic, operation: "send")
            span.attributes["messaging.message.conversation_id"] = correlationID
            if oneWay { span.attributes["geochat.one_way"] = true }
        }
        return span
    }

    /// A consumed command's processing: its parent is the trace context its record carries.
    static func process(_ record: KafkaRecord) -> any Span {
        let span = startSpan("process \(record.topic)", context: TraceHeaders.context(of: record), ofKind: .consumer)
        if span.isRecording {
            span.attributes = attributes(command: nil, topic: record.topic, operation: "process")
            span.attributes["messaging.kafka.message.offset"] = Int(record.offset)
            span.attributes["messaging.destination.partition.id"] = "\(record.partition)"
        }
        return span
    }

    /// An event applied by a reader (a gateway's read models), as a consumer
    /// span under the handler that published it — a say's trace shows its
    /// message arriving at each gateway. Only for a record that carries a
    /// trace context: an event from no request starts no trace.
    public static func applying<T>(_ record: KafkaRecord, _ apply: () -> T) -> T {
        guard !record.headers.isEmpty else { return apply() }
        let span = startSpan("apply \(record.topic)", context: TraceHeaders.context(of: record), ofKind: .consumer)
        defer { span.end() }
        if span.isRecording {
            span.attributes = attributes(command: nil, topic: record.topic, operation: "process")
        }
        return apply()
    }

    /// Names the processing span after its command, once the record is read.
    static func describe(_ span: any Span, header: RequestHeader) {
        guard span.isRecording else { return }
        span.operationName = "process \(header.commandName)"
        span.attributes["geochat.command"] = header.commandName
        span.attributes["messaging.message.conversation_id"] = header.correlationID
    }

    /// Marks a span failed, with the reason (a protocol error's code, a drop's reason).
    static func failed(_ span: any Span, _ reason: String) {
        guard span.isRecording else { return }
        span.setStatus(SpanStatus(code: .error, message: reason))
    }

    /// A request that got no reply, or a refusal.
    static func failed(_ span: any Span, _ error: RequestError) {
        switch error {
        case .timedOut: failed(span, "timed out")
        case .notSent: failed(span, "not sent")
        case .refused(let refusal): failed(span, refusal.code.rawValue)
        case .unexpectedReply: failed(span, "unexpected reply")
        }
    }

    private static func attributes(command: String?, topic: String, operation: String) -> SpanAttributes {
        var attributes = SpanAttributes()
        attributes["messaging.system"] = "kafka"
        attributes["messaging.operation.type"] = operation
        attributes["messaging.destination.name"] = topic
        if let command { attributes["geochat.command"] = command }
        return attributes
    }
}
