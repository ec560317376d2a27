import GeoChatBus
import GeoChatDomain
import GeoChatKafka
import GeoChatMetrics
import Logging
import Metrics
import Synchronization

/// Gets every stored message announced. The message and its outbox row commit
/// together (`MessageStore.append`); the `say` handler hands the event to the
/// producer right after the commit (`announce`), and the row goes once the
/// broker took it.
/// Whatever is left — the broker refused, or the instance died between commit
/// and publish — the relay publishes after `grace`, from PostgreSQL, so it
/// survives restarts and needs no particular instance. Consumers take a
/// message twice or late without harm: they keep messages by (room, id).
final class OutboxRelay: Sendable {
    let store: any MessageStore
    let events: any EventPublisher
    let logger: Logger
    /// How old an outbox row must be before the relay takes it: the handler's
    /// own publish normally ends well within it.
    let grace: Duration
    /// Rows the handler got acknowledged, deleted in one statement per pass.
    private let acknowledged = Mutex<[MessageRef]>([])
    private let unsettled = Atomic<Int>(0)

    /// Kept this many acknowledged rows at most while PostgreSQL is away; beyond
    /// it they are forgotten here and the relay publishes them once more
    /// (a duplicate event, which consumers ignore).
    static let maxAcknowledged = 100_000
    /// Rooms the relay publishes side by side (a room's events one after another).
    static let parallelRooms = 32

    private static let published = LabeledFamily(counter: MetricNames.outboxPublished, label: "by")
    private static let failures = LabeledFamily(counter: MetricNames.outboxPublishFailures, label: "by")
    private static let backlog = Gauge(label: MetricNames.outboxBacklog)

    init(store: any MessageStore, events: any EventPublisher, logger: Logger, grace: Duration = .seconds(2)) {
        self.store = store
        self.events = events
        self.logger = logger
        self.grace = grace
    }

    /// The handler's path, right after the commit: the event is handed to the
    /// producer at once (so a room's events leave in the order of its says, and
    /// with the reply the processor produces next) and the handler does not wait
    /// for the broker: the outbox row holds the event until the broker
    /// acknowledged it (then the row is forgotten) or, failing that, until the
    /// relay publishes it.
    func announce(_ stored: MessageStored) {
        let delivery = events.enqueue(stored)
        unsettled.add(1, ordering: .relaxed)
        Task {
            await self.settle(delivery, of: stored)
            self.unsettled.subtract(1, ordering: .relaxed)
        }
    }

    private func settle(_ delivery: RecordDelivery, of stored: MessageStored) async {
        do {
            try await delivery.wait()
        } catch {
            Self.failures["say"].increment()
            logger.warning(
                "message stored, event left to the outbox relay",
                metadata: ["room": "\(stored.message.room)", "id": "\(stored.message.id)", "error": "\(error)"])
            return
        }
        Self.published["say"].increment()
        acknowledged.withLock { rows in
            if rows.count >= Self.maxAcknowledged { rows.removeFirst(rows.count - Self.maxAcknowledged + 1) }
            rows.append(MessageRef(stored.message))
        }
    }

    /// Events the handler handed over whose broker answer is still to come.
    var inFlight: Int { unsettled.load(ordering: .relaxed) }

    /// Rows the handler published whose deletion is still to come.
    var acknowledgedCount: Int { acknowledged.withLock { $0.count } }

    /// Every `interval` until cancelled: forgets what the handler got
    /// acknowledged, then runs a relay pass (one instance at a time).
    func run(every interval: Duration = .milliseconds(500)) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            do {
                try await pass()
            } catch {
                logger.warning("outbox relay pass failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }

    /// One round: the acknowledged rows deleted, then the relay's pass.
    @discardableResult
    func pass() async throws -> OutboxPass {
        let done = acknowledged.withLock { rows in
            defer { rows.removeAll(keepingCapacity: true) }
            return rows
        }
        do {
            try await store.announced(done)
        } catch {
            acknowledged.withLock { $0.insert(contentsOf: done.suffix(max(0, Self.maxAcknowledged - $0.count)), at: 0) }
            throw error
        }
        let outcome = try await store.relayUnannounced(olderThan: grace, limit: 1000) { due in
            await self.publishInOrder(due)
        }
        if case .relayed(let published, let failed, let left) = outcome {
            Self.backlog.record(left)
            if published > 0 || failed > 0 {
                logger.info(
                    "outbox relayed late message events",
                    metadata: ["published": "\(published)", "failed": "\(failed)", "backlog": "\(left)"])
            }
        }
        return outcome
    }

    /// Publishes rooms side by side and each room's events in id order, stopping
    /// a room at its first refusal (the rest wait for the next pass, so order
    /// holds); answers what the broker took.
    private func publishInOrder(_ due: [MessageStored]) async -> [MessageRef] {
        var byRoom: [RoomID: [MessageStored]] = [:]
        for stored in due { byRoom[stored.message.room, default: []].append(stored) }
        var rooms = byRoom.values.makeIterator()
        return await withTaskGroup(of: [MessageRef].self) { group in
            for _ in 0..<Self.parallelRooms {
                guard let room = rooms.next() else { break }
                group.addTask { await self.publishRoom(room) }
            }
            var published: [MessageRef] = []
            for await done in group {
                published += done
                if let room = rooms.next() { group.addTask { await self.publishRoom(room) } }
            }
            return published
        }
    }

    private func publishRoom(_ events: [MessageStored]) async -> [MessageRef] {
        var done: [MessageRef] = []
        for stored in events {
            do { try await self.events.publish(stored) } catch {
                Self.failures["relay"].increment()
                break
            }
            Self.published["relay"].increment()
            done.append(MessageRef(stored.message))
        }
        return done
    }
}
