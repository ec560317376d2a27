import GeoChatKafka

/// A transactional outbox: a state change and the event that announces it
/// commit together in PostgreSQL; `OutboxRelay` gets the event to the broker
/// (docs/architecture.md, "The outbox"). Each service's store is one.
public protocol Outbox<Entry>: Sendable {
    associatedtype Entry: OutboxEntry

    /// The broker acknowledged these entries' events: their rows go.
    func announced(_ entries: [Entry.Ref]) async throws
    /// One relay pass, run by at most one instance at a time cluster-wide (others
    /// get `.notLeader`): entries stored longer than `grace` ago, at most `limit`,
    /// in the order they were stored, go to `publish`, which answers those the
    /// broker acknowledged; their rows are then removed (and those whose subject
    /// is gone meanwhile).
    func relayUnannounced(
        olderThan grace: Duration, limit: Int, publish: @Sendable ([Entry]) async -> [Entry.Ref]
    ) async throws -> OutboxPass
}

/// What an outbox holds: an event to publish, named by a reference the outbox
/// can delete it by.
public protocol OutboxEntry: Sendable {
    associatedtype Ref: Hashable & Sendable
    var ref: Ref { get }
    /// Entries of one lane leave in order (a Kafka key: one room's, one session's events).
    var lane: String { get }
    func enqueue(on events: any EventPublisher) -> RecordDelivery
}

/// The outcome of one relay pass.
public enum OutboxPass: Equatable, Sendable {
    /// Another instance is relaying.
    case notLeader
    /// `published` events went out, `failed` are kept for the next pass;
    /// `backlog` rows were left in the outbox after the pass (young ones included).
    case relayed(published: Int, failed: Int, backlog: Int)
}

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
