import GeoChatKafka

/// An event stored in an outbox with the change it announces (`seq`: its row).
public struct StagedEvent: OutboxEntry, Hashable {
    public let seq: Int64
    public let record: EncodedEvent

    public init(seq: Int64, record: EncodedEvent) {
        self.seq = seq
        self.record = record
    }

    public var ref: Int64 { seq }
    public var lane: String { record.topic + "/" + record.key }
    public func enqueue(on events: any EventPublisher) -> RecordDelivery { events.enqueue(record) }

    /// The same row, its record naming the request it answers (the outbox keeps it as staged).
    public func answering(_ correlationID: String) -> StagedEvent? {
        record.answering(correlationID).map { StagedEvent(seq: seq, record: $0) }
    }
}
