import Logging

/// Creates the topics a service needs at start, idempotently: several instances
/// may start at once, and a broker that lost its topics gets them back. With
/// `TopicsMode.verify` it only checks that they exist (topics the operator manages).
public struct TopicProvisioner: Sendable {
    let producer: KafkaProducer
    let settings: KafkaSettings
    let logger: Logger

    public init(producer: KafkaProducer, settings: KafkaSettings, logger: Logger) {
        self.producer = producer
        self.settings = settings
        self.logger = logger
    }

    /// One attempt; throws when the broker does not answer in time, or (verify)
    /// names the topics missing. `mode` nil: the settings' mode.
    public func ensure(_ topics: [TopicSpec], mode: TopicsMode? = nil) throws {
        let topics = inGenerations(topics)
        switch mode ?? settings.topicsMode {
        case .create:
            try producer.administer { client in
                // Asks first and creates only what is missing: Tansu 0.6 rewrites its
                // whole metadata document on every CreateTopics, even for a topic it
                // has, and every fetch after a rewrite parses the document again; with
                // every instance checking every 5 s and topics rotating, that cost
                // grew with every topic ever made (docs/architecture.md, "Topic generations").
                let existing = try client.existingTopics(topics.map(\.name), timeoutMs: 5000)
                let missing = topics.filter { !existing.contains($0.name) }
                guard !missing.isEmpty else { return }
                try client.createTopics(
                    missing.map {
                        (
                            $0.name, $0.partitions ?? settings.partitions,
                            $0.config(minInsyncReplicas: settings.minInsyncReplicas)
                        )
                    },
                    replicationFactor: settings.replicationFactor, timeoutMs: 5000)
            }
        case .verify:
            let missing = try producer.administer { client in
                try topics.filter { (try? client.partitionCount($0.name, timeoutMs: 5000)) ?? 0 < 1 }.map(\.name)
            }
            guard missing.isEmpty else {
                throw KafkaError.admin(
                    "topics missing (GEOCHAT_KAFKA_TOPICS=verify): \(missing.joined(separator: ", "))")
            }
        }
    }

    /// The topics as the broker must hold them now: a rotating topic's current
    /// and next generation (`TopicGenerations`), so the next exists well before
    /// producers and consumers move to it.
    func inGenerations(_ topics: [TopicSpec]) -> [TopicSpec] {
        guard let generations = settings.generations else { return topics }
        let now = generations.generation(atMs: wallClockMs())
        return topics.flatMap { spec -> [TopicSpec] in
            guard generations.rotates(spec.name) else { return [spec] }
            return [now, now + 1].map { generation in
                var named = spec
                named.name = generations.physical(spec.name, generation: generation)
                return named
            }
        }
    }

    /// Creates topics this instance makes and deletes while it runs (reply
    /// topics), through a client of their own (`KafkaProducer.administerApart`).
    public func createApart(_ topics: [TopicSpec]) async throws {
        try await offloaded { [self] in
            try producer.administerApart { client in
                try client.createTopics(
                    topics.map {
                        (
                            $0.name, $0.partitions ?? settings.partitions,
                            $0.config(minInsyncReplicas: settings.minInsyncReplicas)
                        )
                    },
                    replicationFactor: settings.replicationFactor, timeoutMs: 5000)
            }
        }
    }

    /// Tries until it succeeds or the task is cancelled (the broker may start after us).
    public func ensureRetrying(_ topics: [TopicSpec], mode: TopicsMode? = nil) async throws {
        var attempt = 0
        while true {
            do {
                try await offloaded { [self] in try ensure(topics, mode: mode) }
                return
            } catch {
                attempt += 1
                if attempt == 1 || attempt % 10 == 0 {
                    logger.warning("topics not ready yet, retrying", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: .milliseconds(min(2000, 100 * attempt)))
            }
        }
    }

    /// Checks every few seconds that the topics still exist: a broker that keeps
    /// topics in memory (the `tansu` profile) forgets them when it restarts,
    /// and producers do not auto-create (they would pick the broker's
    /// partition count, not ours). With any other profile it returns at once:
    /// a Kafka cluster keeps its topics.
    /// `groups`: the consumer groups this process reads rotating topics under,
    /// whose old generations' groups it deletes (`pruneGenerations`).
    public func keep(
        _ topics: [TopicSpec], groups: [String] = [], mode: TopicsMode? = nil, every interval: Duration = .seconds(5)
    ) async {
        await keep({ topics }, groups: groups, mode: mode, every: interval)
    }

    /// The same for topics that change while it runs (a requester's current reply topic).
    public func keep(
        _ topics: @escaping @Sendable () -> [TopicSpec], groups: [String] = [], mode: TopicsMode? = nil,
        every interval: Duration = .seconds(5)
    ) async {
        guard settings.profile.recreatesLostTopics else { return }
        var pruneAtMs: Int64 = 0
        var groupsPrunedThrough: Int64?
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let now = topics()
            do {
                try await offloaded { [self] in try ensure(now, mode: mode) }
            } catch {
                logger.debug("topic check failed", metadata: ["error": "\(error)"])
            }
            if let generations = settings.generations, wallClockMs() >= pruneAtMs {
                // Once a generation, at a moment of this instance's own within its first
                // half, so the instances do not all ask at once; the first to ask deletes.
                let next = generations.startMs(of: generations.generation(atMs: wallClockMs()) + 1)
                pruneAtMs = next + Int64.random(in: 0..<max(1, generations.periodMs / 2))
                let through = generations.newestExpired(atMs: wallClockMs())
                let pruned = await pruneGenerations(
                    of: now, generations, groups: groups, after: groupsPrunedThrough, through: through)
                // A failed prune names the same generations again next time.
                if pruned.groups != nil { groupsPrunedThrough = through }
            }
        }
    }

    /// *tansu*: deletes the generations of `topics` no reader can still hold
    /// (`TopicGenerations.expired`), and their consumer groups, so the
    /// broker's memory stays bounded: those it lists (`expiredGroups`), and
    /// those of `groups` (this process's) for the generations after `after`
    /// through `through` (an expired one, `newestExpired`) by name, since
    /// Tansu lists only a group that committed an offset. The groups go
    /// first: deleting a topic drops the groups' offsets of it, after which
    /// Tansu no longer lists the group, but keeps its state for ever. What it
    /// deleted (also counted and logged); nil groups: the groups' prune failed.
    @discardableResult
    func pruneGenerations(
        of topics: [TopicSpec], _ generations: TopicGenerations, groups: [String] = [], after: Int64? = nil,
        through: Int64
    ) async -> (topics: [String], groups: [String]?) {
        let rotating = Set(topics.map(\.name).filter(generations.rotates))
        guard !rotating.isEmpty else { return ([], []) }
        let groups = await pruneGroups(generations, named: groups, after: after, through: through)
        do {
            let deleted = try await offloaded { [producer] in
                try producer.administer { client -> [String] in
                    let ours = try client.topicNames(timeoutMs: 5000).filter {
                        rotating.contains(generations.logical($0).topic)
                    }
                    let expired = generations.expired(ours, atMs: wallClockMs())
                    if !expired.isEmpty { try client.deleteTopics(expired, timeoutMs: 5000) }
                    return expired
                }
            }
            if !deleted.isEmpty {
                KafkaMetrics.generationsDeleted.increment(by: deleted.count)
                logger.info("old topic generations deleted", metadata: ["topics": "\(deleted.sorted())"])
            }
            return (deleted, groups)
        } catch {
            logger.debug("old topic generations not deleted", metadata: ["error": "\(error)"])
            return ([], groups)
        }
    }

    /// The consumer groups of expired generations, deleted; their names (nil: the broker did not answer).
    private func pruneGroups(
        _ generations: TopicGenerations, named groups: [String], after: Int64?, through: Int64
    ) async -> [String]? {
        do {
            let deleted = try await offloaded { [producer] in
                try producer.administer { client -> [String] in
                    let listed = generations.expiredGroups(try client.groupNames(timeoutMs: 5000), atMs: wallClockMs())
                    let named = generations.expiredGroups(of: groups, after: after, through: through)
                    let expired = Array(Set(listed + named)).sorted()
                    return expired.isEmpty ? [] : try client.deleteGroups(expired, timeoutMs: 5000)
                }
            }
            if !deleted.isEmpty {
                KafkaMetrics.generationGroupsDeleted.increment(by: deleted.count)
                logger.info("old generations' consumer groups deleted", metadata: ["groups": "\(deleted.sorted())"])
            }
            return deleted
        } catch {
            logger.debug("old generations' consumer groups not deleted", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Deletes topics this instance made for itself (a reply topic under a
    /// generated instance id, at shutdown: the next start has another name).
    public func delete(_ topics: [String]) async throws {
        try await offloaded { [producer] in try producer.administer { try $0.deleteTopics(topics, timeoutMs: 5000) } }
    }

    /// The topics whose names start with `prefix`, as the broker's metadata has them now.
    public func topics(named prefix: String) async throws -> [String] {
        try await offloaded { [producer] in
            try producer.administer { try $0.topicNames(timeoutMs: 5000) }.filter { $0.hasPrefix(prefix) }
        }
    }

    /// The consumer groups whose names start with `prefix`, as the broker lists them now.
    public func groups(named prefix: String) async throws -> [String] {
        try await offloaded { [producer] in
            try producer.administer { try $0.groupNames(timeoutMs: 5000) }.filter { $0.hasPrefix(prefix) }
        }
    }

    /// How many records the topic holds now (the sum of its high watermarks).
    /// A broker that keeps topics in memory and restarted answers fewer than before.
    public func recordCount(_ topic: String) async throws -> Int64 {
        try await offloaded { [producer] in
            try producer.administer { try $0.highWatermarks(topic, timeoutMs: 5000).values.reduce(0, +) }
        }
    }

    /// The topic's partitions as the broker's metadata has them now.
    public func partitionCount(_ topic: String) async throws -> Int {
        try await offloaded { [producer] in try producer.administer { try $0.partitionCount(topic, timeoutMs: 5000) } }
    }
}

/// What start-up does about the shared topics.
public enum TopicsMode: String, Sendable, CaseIterable {
    /// Creates those missing, with the specs in code (`TopicSpec`).
    case create
    /// Only checks that they exist with enough partitions (topics managed by
    /// the operator, e.g. Strimzi `KafkaTopic`; no create rights needed).
    case verify
}
