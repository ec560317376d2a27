import GeoChatDomain
import GeoChatKafka
import GeoChatMetrics
import Logging
import Metrics
import Synchronization

/// Gets every staged event announced. The change and its outbox row commit
/// together; the handler hands the event to the producer right after the
/// commit (`announce`), and the row goes once the broker took it.
/// Whatever is left — the broker refused, or the instance died between commit
/// and publish — the relay publishes after `grace`, from PostgreSQL, so it
/// survives restarts and needs no particular instance. Consumers take an
/// event twice or late without harm (docs/architecture.md, "The outbox").
public final class OutboxRelay<Entry: OutboxEntry>: Sendable {
    let outbox: any Outbox<Entry>
    let events: any EventPublisher
    let logger: Logger
    /// How old an outbox row must be before the relay takes it: the handler's
    /// own publish normally ends well within it.
    let grace: Duration
    /// Rows the handler got acknowledged, deleted in one statement per pass.
    private let acknowledged = Mutex<[Entry.Ref]>([])
    private let unsettled = Atomic<Int>(0)
    /// When this instance last handed an event over (`run` passes often after it).
    private let lastAnnounced = Mutex<ContinuousClock.Instant?>(nil)
    /// The last pass left rows behind (the broker refused, or more than a pass takes).
    private let hasBacklog = Atomic<Bool>(false)

    /// Kept this many acknowledged rows at most while PostgreSQL is away; beyond
    /// it they are forgotten here and the relay publishes them once more
    /// (a duplicate event, which consumers ignore).
    public static var maxAcknowledged: Int { 100_000 }
    /// Lanes the relay publishes side by side (a lane's events one after another).
    static var parallelLanes: Int { 32 }

    public init(outbox: any Outbox<Entry>, events: any EventPublisher, logger: Logger, grace: Duration = .seconds(2)) {
        self.outbox = outbox
        self.events = events
        self.logger = logger
        self.grace = grace
    }

    /// The handler's path, right after the commit: the event is handed to the
    /// producer at once (so a lane's events leave in the order of their
    /// changes, and with the reply the processor produces next) and the handler
    /// does not wait for the broker: the outbox row holds the event until the
    /// broker acknowledged it (then the row is forgotten) or, failing that,
    /// until the relay publishes it.
    /// Returns the event's delivery, for a reply the event carries
    /// (`CommandContext.answeredBy`).
    @discardableResult
    public func announce(_ entry: Entry?) -> RecordDelivery {
        guard let entry else { return .completed(nil) }
        return announce(entry.enqueue(on: events), covering: [entry.ref], lane: entry.lane)
    }

    /// One event that announces several staged entries at once (a removal's tombstones of one room),
    /// on their lane: their rows go once the broker took it; if it did not (or the event could not be
    /// encoded), the relay publishes each entry's own event.
    @discardableResult
    public func announce(_ event: some WireEvent, covering entries: [Entry]) -> RecordDelivery {
        guard let lane = entries.first?.lane else { return .completed(nil) }
        let delivery: RecordDelivery
        do { delivery = events.enqueue(try EncodedEvent(event)) } catch { delivery = .completed(error) }
        return announce(delivery, covering: entries.map(\.ref), lane: lane)
    }

    private func announce(_ delivery: RecordDelivery, covering refs: [Entry.Ref], lane: String) -> RecordDelivery {
        noteAnnounced()
        unsettled.add(1, ordering: .relaxed)
        let settled = OneShot<Bool>()
        Task {
            settled.finish(.success(await self.settle(delivery, of: refs, lane: lane)))
            self.unsettled.subtract(1, ordering: .relaxed)
        }
        return RecordDelivery {
            guard try await settled.value() else { throw OutboxRelayRefusal() }
        }
    }

    /// As `announce`, but returns once the broker answered, either way: for
    /// changes whose readers should have the event before the client has the
    /// answer. A refusal is not the client's failure: the change is committed
    /// and the relay publishes it.
    public func announceAndWait(_ entry: Entry?) async {
        await announceAndWait(entry.map { [$0] } ?? [])
    }

    /// Several at once: all handed over, then their answers awaited.
    public func announceAndWait(_ entries: [Entry]) async {
        if !entries.isEmpty { noteAnnounced() }
        let deliveries = entries.map { ($0, $0.enqueue(on: events)) }
        for (entry, delivery) in deliveries { await settle(delivery, of: [entry.ref], lane: entry.lane) }
    }

    private func noteAnnounced() {
        let now = ContinuousClock.now
        lastAnnounced.withLock { $0 = now }
    }

    /// Whether the broker took the event (announcing the entries `refs` names).
    @discardableResult
    private func settle(_ delivery: RecordDelivery, of refs: [Entry.Ref], lane: String) async -> Bool {
        do {
            try await delivery.wait()
        } catch {
            OutboxMetrics.failures["handler"].increment()
            logger.warning(
                "change committed, event left to the outbox relay",
                metadata: ["lane": "\(lane)", "error": "\(error)"])
            return false
        }
        OutboxMetrics.published["handler"].increment()
        acknowledged.withLock { rows in
            rows.append(contentsOf: refs)
            if rows.count > Self.maxAcknowledged { rows.removeFirst(rows.count - Self.maxAcknowledged) }
        }
        return true
    }

    /// Events the handler handed over whose broker answer is still to come.
    public var inFlight: Int { unsettled.load(ordering: .relaxed) }

    /// Rows the handler published whose deletion is still to come.
    public var acknowledgedCount: Int { acknowledged.withLock { $0.count } }

    /// Until cancelled: forgets what the handler got acknowledged, then runs a
    /// relay pass (one instance at a time). Every `interval` while this
    /// instance announced something within the last `grace` + 2 `interval`s
    /// (what it staged is relayed as soon as it is due), otherwise every
    /// `idleInterval`: an instance with no work costs PostgreSQL one short
    /// transaction per `idleInterval`, and a row left by another instance that
    /// died waits at most that long after its grace (docs/architecture.md, "The outbox").
    public func run(every interval: Duration = .milliseconds(500), whenIdle idleInterval: Duration = .seconds(2)) async
    {
        var lastPass = ContinuousClock.now
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let now = ContinuousClock.now
            let busy =
                lastAnnounced.withLock { $0.map { now - $0 < grace + interval * 2 } ?? false }
                || acknowledgedCount > 0 || inFlight > 0 || hasBacklog.load(ordering: .relaxed)
            guard busy || now - lastPass >= idleInterval else { continue }
            lastPass = now
            do {
                try await pass()
            } catch {
                logger.warning("outbox relay pass failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }

    /// One round: the acknowledged rows deleted, then the relay's pass.
    @discardableResult
    public func pass() async throws -> OutboxPass {
        let done = acknowledged.withLock { rows in
            defer { rows.removeAll(keepingCapacity: true) }
            return rows
        }
        if !done.isEmpty {
            do {
                try await outbox.announced(done)
            } catch {
                acknowledged.withLock {
                    $0.insert(contentsOf: done.suffix(max(0, Self.maxAcknowledged - $0.count)), at: 0)
                }
                throw error
            }
        }
        let outcome = try await outbox.relayUnannounced(olderThan: grace, limit: 1000) { due in
            await self.publishInOrder(due)
        }
        if case .relayed(let published, let failed, let left) = outcome {
            hasBacklog.store(left > 0 || failed > 0, ordering: .relaxed)
            OutboxMetrics.backlog.record(left)
            if published > 0 || failed > 0 {
                logger.info(
                    "outbox relayed late events",
                    metadata: ["published": "\(published)", "failed": "\(failed)", "backlog": "\(left)"])
            }
        }
        return outcome
    }

    /// Publishes lanes side by side and each lane's events in order, stopping
    /// a lane at its first refusal (the rest wait for the next pass, so order
    /// holds); answers what the broker took.
    private func publishInOrder(_ due: [Entry]) async -> [Entry.Ref] {
        var lanes: [String: [Entry]] = [:]
        for entry in due { lanes[entry.lane, default: []].append(entry) }
        var pending = lanes.values.makeIterator()
        return await withTaskGroup(of: [Entry.Ref].self) { group in
            for _ in 0..<Self.parallelLanes {
                guard let lane = pending.next() else { break }
                group.addTask { await self.publishLane(lane) }
            }
            var published: [Entry.Ref] = []
            for await done in group {
                published += done
                if let lane = pending.next() { group.addTask { await self.publishLane(lane) } }
            }
            return published
        }
    }

    private func publishLane(_ entries: [Entry]) async -> [Entry.Ref] {
        var done: [Entry.Ref] = []
        for entry in entries {
            do { try await entry.enqueue(on: events).wait() } catch {
                OutboxMetrics.failures["relay"].increment()
                break
            }
            OutboxMetrics.published["relay"].increment()
            done.append(entry.ref)
        }
        return done
    }
}

/// The broker did not take an event the handler announced: the outbox relay publishes it later.
struct OutboxRelayRefusal: Error, CustomStringConvertible {
    var description: String { "the broker refused the event; the outbox relay publishes it later" }
}

/// Label `by`: `handler` (published right after the commit) or `relay`.
enum OutboxMetrics {
    static let published = LabeledFamily(counter: MetricNames.outboxPublished, label: "by")
    static let failures = LabeledFamily(counter: MetricNames.outboxPublishFailures, label: "by")
    static let backlog = Gauge(label: MetricNames.outboxBacklog)
}
