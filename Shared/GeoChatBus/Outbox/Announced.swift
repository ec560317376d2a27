import GeoChatKafka

/// A store's answer to a change: the result, and the event staged with it
/// (nil when nothing changed, e.g. a repeated request).
public struct Announced<Value: Sendable>: Sendable {
    public var value: Value
    public var event: StagedEvent?

    public init(_ value: Value, event: StagedEvent?) {
        self.value = value
        self.event = event
    }

    /// Whether this request made the change (not a repeat of an earlier one).
    public var changed: Bool { event != nil }
}
