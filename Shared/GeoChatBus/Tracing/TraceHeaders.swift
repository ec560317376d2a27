import GeoChatKafka
import Tracing

/// The W3C trace context (`traceparent`, `tracestate`) in Kafka record
/// headers: written where a command, a reply or an event is produced, read
/// where a command is consumed, so one request's spans form one trace across
/// the services (docs/operations.md, "Traces"). The tracer bootstrapped at
/// start does the encoding; while tracing is off (the no-op tracer) nothing is
/// written and nothing is read.
public enum TraceHeaders {
    /// The headers that carry `context` to the record's reader (none while tracing is off).
    /// `instrument`: the one bootstrapped, but for tests.
    public static func carrying(
        _ context: InstrumentationContext, using instrument: any Instrument = InstrumentationSystem.instrument
    ) -> [KafkaHeader] {
        var headers: [KafkaHeader] = []
        instrument.inject(context, into: &headers, using: HeaderInjector())
        return headers
    }

    /// The headers that carry the current task's trace context (none outside any span).
    public static func current() -> [KafkaHeader] {
        guard let context = InstrumentationContext.current else { return [] }
        return carrying(context)
    }

    /// The trace context a record's headers carry: the parent of the span that
    /// processes it (top level, a trace of its own, when they carry none).
    public static func context(
        of record: KafkaRecord, using instrument: any Instrument = InstrumentationSystem.instrument
    ) -> InstrumentationContext {
        var context = InstrumentationContext.topLevel
        guard !record.headers.isEmpty else { return context }
        instrument.extract(record.headers, into: &context, using: HeaderExtractor())
        return context
    }

    /// Writes one header per key the tracer asks for.
    struct HeaderInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout [KafkaHeader]) {
            carrier.append(KafkaHeader(key, value))
        }
    }

    /// Reads the last header of the name the tracer asks for (header names are
    /// case-sensitive on Kafka; W3C's are lower case, as written).
    struct HeaderExtractor: Extractor {
        func extract(key: String, from carrier: [KafkaHeader]) -> String? {
            carrier.last { $0.name == key }?.text
        }
    }
}
