import Foundation

/// Shared topics rotated by time on a broker that never trims a topic (*tansu*).
///
/// Tansu 0.6 keeps every batch of a partition for ever and lists them all on
/// each fetch that returns records, under one lock, so a busy topic makes the
/// whole broker slower every minute it lives (docs/architecture.md, "Topic
/// generations"). With generations, a rotating topic `t` is written as
/// `t.g<n>`, where `n` is the wall-clock time in milliseconds divided by the
/// period: every producer on the machine moves to the next generation at the
/// same instant, and a consumer reads one generation after the other
/// (`KafkaConsumer`), so each fetch lists at most one period of batches.
///
/// A generation is deleted once no reader can still hold it (`expired`): Tansu
/// frees a deleted topic's batches, which is what bounds its memory.
///
/// Pure: names and instants only. Callers pass the time.
public struct TopicGenerations: Sendable {
    /// How long one generation is written to.
    public let periodMs: Int64
    /// Which logical topics rotate (the others keep their plain name).
    public let rotates: @Sendable (String) -> Bool
    /// How long after its end a generation is kept. A reader closes its
    /// generation within the producer's message timeout and 30 s of handlers
    /// finishing what it handed out (`KafkaConsumer.followGenerations`), and a
    /// group member starting up opens only the one before the current; a
    /// consumer still fetching a deleted topic crashes librdkafka
    /// (docs/architecture.md, "Topic generations"), so the default is four
    /// periods, at least two minutes.
    public let retentionMs: Int64

    public init(periodMs: Int64, retentionMs: Int64? = nil, rotates: @escaping @Sendable (String) -> Bool) {
        precondition(periodMs > 0, "a generation lasts some time")
        self.periodMs = periodMs
        self.retentionMs = retentionMs ?? max(4 * periodMs, 120_000)
        self.rotates = rotates
    }

    /// The generation written at `ms` (Unix epoch milliseconds).
    public func generation(atMs ms: Int64) -> Int64 { ms / periodMs }

    /// When writing to `generation` starts (Unix epoch milliseconds).
    public func startMs(of generation: Int64) -> Int64 { generation * periodMs }

    /// The topic records of `topic` go to in `generation` (itself if it does not rotate).
    public func physical(_ topic: String, generation: Int64) -> String {
        rotates(topic) ? "\(topic)\(Self.marker)\(generation)" : topic
    }

    /// The topic records of `topic` go to now.
    public func physical(_ topic: String, atMs ms: Int64) -> String {
        physical(topic, generation: generation(atMs: ms))
    }

    /// The logical topic and generation of a physical name (nil generation: it does not rotate).
    public func logical(_ physical: String) -> (topic: String, generation: Int64?) {
        guard let (topic, generation) = Self.split(physical) else { return (physical, nil) }
        return rotates(topic) ? (topic, generation) : (physical, nil)
    }

    /// A name and its generation suffix (`<name>.g<n>`), nil without one.
    private static func split(_ name: String) -> (String, Int64)? {
        guard let range = name.range(of: marker, options: .backwards),
            let generation = Int64(name[range.upperBound...]), generation >= 0
        else { return nil }
        return (String(name[..<range.lowerBound]), generation)
    }

    /// Whether `generation` ended at least `retentionMs` before `ms`: no reader holds it any more.
    public func hasExpired(_ generation: Int64, atMs ms: Int64) -> Bool {
        startMs(of: generation + 1) <= ms - retentionMs
    }

    /// Those of `names` that are generations of a rotating topic ended at least
    /// `retentionMs` before `ms`: no reader holds them any more, and they can be deleted.
    public func expired(_ names: [String], atMs ms: Int64) -> [String] {
        names.filter { name in logical(name).generation.map { hasExpired($0, atMs: ms) } ?? false }
    }

    /// The consumer group a group reads `generation` under: each generation
    /// has a group of its own, so a member joins it with nothing to rebalance.
    public static func group(_ group: String, generation: Int64) -> String { "\(group)\(marker)\(generation)" }

    /// Those of `groups` that are the groups of a generation ended at least
    /// `retentionMs` before `ms` (`expired`'s rule): their topic is deleted
    /// or about to be, and a broker that never forgets a group (Tansu) would
    /// otherwise hold one more per group each period.
    public func expiredGroups(_ groups: [String], atMs ms: Int64) -> [String] {
        groups.filter { name in
            guard let (group, generation) = Self.split(name), !group.isEmpty else { return false }
            return hasExpired(generation, atMs: ms)
        }
    }

    /// The newest generation past its retention at `ms` (`hasExpired`).
    public func newestExpired(atMs ms: Int64) -> Int64 { generation(atMs: ms - retentionMs) - 1 }

    /// The groups of `groups` (the names a process reads under) for the
    /// generations after `after` through `newest` (nil: the last `window` of
    /// them). Tansu lists only groups that committed an offset, so a group
    /// that never got a record (an idle generation) can only be deleted by
    /// its name.
    public func expiredGroups(of groups: [String], after: Int64?, through newest: Int64, window: Int64 = 8) -> [String]
    {
        let first = max(after.map { $0 + 1 } ?? newest - window + 1, newest - window + 1, 0)
        guard first <= newest else { return [] }
        return (first...newest).flatMap { generation in groups.map { Self.group($0, generation: generation) } }
    }

    static let marker = ".g"
}

/// Unix epoch milliseconds now.
func wallClockMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
