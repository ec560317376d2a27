import GeoChatDomain

/// A requester's reply topics: the one requests name now, and the ones it
/// replaced, kept until no request waits on them.
///
/// Tansu keeps every record of a topic and lists them all on each fetch that
/// returns records, so a reply topic that only grows makes every reply slower
/// (docs/architecture.md, "Request/reply"). After `rotateAfter` replies the
/// requester makes the next generation, reads it from its first record, and
/// only then names it in new requests; once the requests naming the old one
/// have ended its reader is closed, and `deleteAfterMs` later the topic is
/// deleted (a consumer still fetching a deleted topic crashes librdkafka 2.16
/// on Tansu: docs/architecture.md, "Request/reply"). A pure state machine:
/// `KafkaCommandBus` makes, reads and deletes the topics it names.
struct ReplyTopics: Sendable {
    let instance: String
    /// Replies on one topic before the next one is made (nil: never).
    let rotateAfter: Int?
    private(set) var current: String
    private(set) var generation = 0
    private var receivedOnCurrent = 0
    private var rotating = false
    /// Requests under way, by the reply topic they named.
    private var holders: [String: Int] = [:]
    /// Replaced topics whose reader is still open.
    private(set) var retired: Set<String> = []
    /// Replaced topics whose reader is closed, by when (epoch milliseconds): not deleted yet.
    private(set) var closed: [String: Int64] = [:]

    /// How long after its reader closed a topic is deleted. A closed reader's
    /// librdkafka handle lives until its last reference goes, and a fetch it
    /// sent before may still be answered: on Tansu an answer for a topic that
    /// is gone crashes librdkafka 2.16. Tansu answers a fetch within its wait
    /// (30 ms for reply readers); a second after unassigning was safe in every
    /// run of the reproduction (docs/architecture.md, "Request/reply"), two keep a margin.
    static let deleteAfterMs: Int64 = 2_000

    /// `startedAtMs`: when this process started. A rotating requester begins on
    /// a generation no earlier start of the same instance named (the start's
    /// milliseconds × 1,000, then one up per replacement: a collision would take
    /// a thousand replacements a millisecond). Reusing a name is what made a
    /// gateway restarted a dozen times answer nothing: the plain topic, never
    /// replaced across starts, had piled up every start's first replies, and on
    /// Tansu a fetch that lists every stored batch stalled its reader (and a
    /// reused `.r<n>`, deleted at the last shutdown, was still unknown to the
    /// repliers' cached metadata). Never rotating (`rotateAfter` nil, a real
    /// Kafka that trims by retention): the plain name, as before.
    init(instance: String, rotateAfter: Int?, startedAtMs: Int64 = 0) {
        self.instance = instance
        self.rotateAfter = rotateAfter
        generation = rotateAfter == nil ? 0 : Int(startedAtMs) * 1000
        current = Topics.replies(instance: instance, generation: generation)
    }

    /// A request starts: the topic it names for its reply.
    mutating func hold() -> String {
        holders[current, default: 0] += 1
        return current
    }

    /// The request that named `topic` ended (answered, timed out or not sent).
    mutating func release(_ topic: String) {
        guard let count = holders[topic] else { return }
        holders[topic] = count > 1 ? count - 1 : nil
    }

    /// A reply arrived on `topic`: true when the caller should now make the next topic.
    mutating func received(on topic: String) -> Bool {
        guard topic == current, let rotateAfter else { return false }
        receivedOnCurrent += 1
        guard receivedOnCurrent >= rotateAfter, !rotating else { return false }
        rotating = true
        return true
    }

    var nextTopic: String { Topics.replies(instance: instance, generation: generation + 1) }

    /// The next topic is made and read: new requests name it. Returns the topic replaced.
    mutating func rotated(to next: String) -> String {
        let previous = current
        retired.insert(previous)
        current = next
        generation += 1
        receivedOnCurrent = 0
        rotating = false
        return previous
    }

    /// Making the next topic failed: the next reply tries again.
    mutating func rotationFailed() { rotating = false }

    /// Replaced topics no request waits on: their readers can be closed.
    func drained() -> [String] { retired.filter { holders[$0] == nil }.sorted() }

    /// The topic's reader closed at `ms`; the topic is deleted `deleteAfterMs` later (`deletable`).
    mutating func readerClosed(_ topic: String, atMs ms: Int64) {
        retired.remove(topic)
        closed[topic] = ms
    }

    /// Topics whose reader closed at least `deleteAfterMs` before `ms`.
    func deletable(atMs ms: Int64) -> [String] {
        closed.filter { $0.value <= ms - Self.deleteAfterMs }.keys.sorted()
    }

    /// The topics are gone from the broker.
    mutating func deleted(_ topics: [String]) { for topic in topics { closed[topic] = nil } }

    /// What a requester that stops deletes: every replaced topic (its readers are closed by then).
    var replaced: [String] { (retired.union(closed.keys)).sorted() }
}
