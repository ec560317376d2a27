import GeoChatKafka
import OTel
import Tracing
import XCTest

@testable import GeoChatBus

/// `TraceHeaders`: the W3C trace context into Kafka record headers and back,
/// with swift-otel's tracer (made here, never bootstrapped: the process's own
/// instrument stays the no-op one the other tests run with).
final class TraceHeadersTests: XCTestCase {
    func makeTracer() throws -> any Tracer {
        var configuration = OTel.Configuration.default
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        return try OTel.makeTracingBackend(configuration: configuration).factory
    }

    func traceparent(_ headers: [KafkaHeader]) throws -> (trace: String, span: String) {
        let value = try XCTUnwrap(headers.last { $0.name == "traceparent" }?.text)
        let match = try XCTUnwrap(
            value.wholeMatch(of: #/00-([0-9a-f]{32})-([0-9a-f]{16})-01/#), "not a W3C traceparent: \(value)")
        return (String(match.1), String(match.2))
    }

    func record(_ headers: [KafkaHeader]) -> KafkaRecord {
        KafkaRecord(topic: "geochat.messaging.commands", partition: 0, offset: 1, key: nil, value: [], headers: headers)
    }

    func testTheConsumersSpanJoinsTheProducersTrace() throws {
        let tracer = try makeTracer()
        let send = tracer.startSpan("send say", context: .topLevel, ofKind: .producer)
        let sent = TraceHeaders.carrying(send.context, using: tracer)
        let (trace, sendSpan) = try traceparent(sent)

        let parent = TraceHeaders.context(of: record(sent), using: tracer)
        let process = tracer.startSpan("process say", context: parent, ofKind: .consumer)
        let (processTrace, processSpan) = try traceparent(TraceHeaders.carrying(process.context, using: tracer))
        XCTAssertEqual(processTrace, trace, "one trace across the topic")
        XCTAssertNotEqual(processSpan, sendSpan, "a span of its own")
        process.end()
        send.end()
    }

    func testARecordWithoutHeadersStartsATraceOfItsOwn() throws {
        let tracer = try makeTracer()
        let send = tracer.startSpan("send say", context: .topLevel, ofKind: .producer)
        let (trace, _) = try traceparent(TraceHeaders.carrying(send.context, using: tracer))
        // What a broken propagation looks like: the record arrives bare.
        let parent = TraceHeaders.context(of: record([]), using: tracer)
        let process = tracer.startSpan("process say", context: parent, ofKind: .consumer)
        let (processTrace, _) = try traceparent(TraceHeaders.carrying(process.context, using: tracer))
        XCTAssertNotEqual(processTrace, trace)
        process.end()
        send.end()
    }

    func testAMalformedTraceparentIsIgnored() throws {
        let tracer = try makeTracer()
        let parent = TraceHeaders.context(of: record([KafkaHeader("traceparent", "00-nonsense-01")]), using: tracer)
        let process = tracer.startSpan("process say", context: parent, ofKind: .consumer)
        XCTAssertNoThrow(try traceparent(TraceHeaders.carrying(process.context, using: tracer)))
        process.end()
    }

    /// Tracing off (the no-op instrument, as bootstrapped by default): no header is written.
    func testNothingIsWrittenWhileTracingIsOff() {
        let noop = NoOpTracer()
        let span = noop.startSpan("send say", context: .topLevel, ofKind: .producer)
        XCTAssertEqual(TraceHeaders.carrying(span.context, using: noop), [])
        XCTAssertEqual(TraceHeaders.current(), [], "the process's own instrument is the no-op one")
    }

    /// What tracing off costs a command: the requester's span and headers, the
    /// owner's extraction and span, all no-ops. Printed for docs/operations.md;
    /// bounded loosely (a debug build on a busy machine: 17 µs at load 13 on 2
    /// cores), against the milliseconds a command's round trip through Kafka takes.
    func testTracingOffAddsMicrosecondsToACommand() {
        let rounds = 100_000
        let bare = record([])
        let elapsed = ContinuousClock().measure {
            for _ in 0..<rounds {
                let send = BusSpans.send("say", topic: "geochat.messaging.commands", correlationID: "c")
                let headers = TraceHeaders.carrying(send.context)
                let process = BusSpans.process(bare)
                process.end()
                send.end()
                precondition(headers.isEmpty)
            }
        }
        let perCommand = elapsed / rounds
        print("tracing off: \(perCommand) per command (send span, headers, process span)")
        XCTAssertLessThan(perCommand, .microseconds(200))
    }
}
