/// One header of a Kafka record: a name and bytes. The only ones GeoChat
/// writes carry the W3C trace context (`traceparent`, `tracestate`) while
/// tracing is on; the JSON value stays the whole contract.
public struct KafkaHeader: Sendable, Equatable {
    public var name: String
    public var value: [UInt8]

    public init(name: String, value: [UInt8]) {
        self.name = name
        self.value = value
    }

    public init(_ name: String, _ text: String) {
        self.init(name: name, value: Array(text.utf8))
    }

    public var text: String { String(decoding: value, as: UTF8.self) }
}
