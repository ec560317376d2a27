import GeoChatBus
import GeoChatDomain
import Synchronization

/// Room logs in memory, by the same rules as `PostgresMessageStore` (the store
/// tests run both): for handler tests.
final class InMemoryMessageStore: MessageStore {
    private struct Log {
        var messages: [ChatMessage] = []
        var authors: [SessionID?] = []
        var removed = false
        var removedMessages: Int64 = 0
    }

    private struct State {
        var logs: [RoomID: Log] = [:]
        var byKey: [String: (ChatMessage, SessionID?)] = [:]
        /// Messages whose event is not acknowledged yet, with when they were stored.
        var outbox: [MessageRef: Int64] = [:]
        var relaying = false
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Int64

    init(now: @escaping @Sendable () -> Int64 = WallClock.nowMs) { self.now = now }

    func state(of room: RoomID) async throws -> RoomLogState {
        state.withLock { state in
            guard let log = state.logs[room] else { return .unknown }
            return log.removed ? .removed : .open(head: log.messages.last?.id ?? 0, removed: log.removedMessages)
        }
    }

    func open(_ rooms: [RoomID]) async throws {
        state.withLock { state in
            for room in rooms where state.logs[room] == nil { state.logs[room] = Log() }
        }
    }

    func stored(key: String) async throws -> (ChatMessage, author: SessionID?)? {
        state.withLock { $0.byKey[key].map { ($0.0, author: $0.1) } }
    }

    func append(room: RoomID, nick: String, text: String, author: SessionID?, key: String, commitBy: Deadline)
        async throws -> Appended?
    {
        let now = now()
        return try state.withLock { state in
            if state.byKey[key] != nil { throw DuplicateIdempotencyKey() }
            guard let log = state.logs[room], !log.removed else { return nil }
            let since = now - MessageRules.repeatWindowMs
            for (message, by) in zip(log.messages, log.authors).reversed() {
                guard message.addedAt > since else { break }
                if by == author, message.nick == nick, message.text == text { return .repeated(message, author: by) }
            }
            if commitBy.hasPassed(nowMs: now) { throw ProtocolError.unavailable }
            let message = ChatMessage(
                room: room, id: (log.messages.last?.id ?? 0) + 1, nick: nick, text: text, addedAt: now)
            state.logs[room]!.messages.append(message)
            state.logs[room]!.authors.append(author)
            state.byKey[key] = (message, author)
            state.outbox[MessageRef(message)] = now
            return .stored(message)
        }
    }

    func heads(_ rooms: [RoomID]) async throws -> [RoomHead] {
        state.withLock { state in
            rooms.compactMap { room in
                guard let log = state.logs[room], !log.removed else { return nil }
                return RoomHead(room: room, head: log.messages.last?.id ?? 0, removed: log.removedMessages)
            }
        }
    }

    func shownFrom(_ rooms: [RoomID]) async throws -> [RoomID: MessageID] {
        state.withLock { state in
            var from: [RoomID: MessageID] = [:]
            for room in rooms {
                guard let log = state.logs[room], !log.removed else { continue }
                from[room] = log.messages.first { !$0.removed }?.id ?? (log.messages.last?.id ?? 0) + 1
            }
            return from
        }
    }

    func announced(_ messages: [MessageRef]) async throws {
        state.withLock { state in for message in messages { state.outbox[message] = nil } }
    }

    /// What is in the outbox, oldest first per room (for tests).
    var unannounced: [MessageRef] {
        state.withLock { $0.outbox.keys.sorted { ($0.room, $0.id) < ($1.room, $1.id) } }
    }

    func relayUnannounced(
        olderThan grace: Duration, limit: Int, publish: @Sendable ([MessageStored]) async -> [MessageRef]
    ) async throws -> OutboxPass {
        let now = now()
        let graceMs = grace.components.seconds * 1000 + grace.components.attoseconds / 1_000_000_000_000_000
        let due: [MessageStored]? = state.withLock { state in
            guard !state.relaying else { return nil }
            state.relaying = true
            return state.outbox.filter { $0.value <= now - graceMs }.keys
                .sorted { ($0.room, $0.id) < ($1.room, $1.id) }.prefix(limit)
                .compactMap { ref in
                    guard let log = state.logs[ref.room],
                        let index = log.messages.firstIndex(where: { $0.id == ref.id })
                    else {
                        state.outbox[ref] = nil  // its room was removed
                        return nil
                    }
                    return MessageStored(message: log.messages[index], author: log.authors[index])
                }
        }
        guard let due else { return .notLeader }
        let published = due.isEmpty ? [] : await publish(due)
        return state.withLock { state in
            for ref in published { state.outbox[ref] = nil }
            state.relaying = false
            return .relayed(
                published: published.count, failed: due.count - published.count, backlog: state.outbox.count)
        }
    }

    func history(room: RoomID, head: MessageID, after: MessageID?, limit: Int, skipRemoved: Bool) async throws
        -> [ChatMessage]
    {
        state.withLock { state in
            let upToHead = (state.logs[room]?.messages ?? []).filter { $0.id <= head && !(skipRemoved && $0.removed) }
            guard let after else { return Array(upToHead.suffix(limit)) }
            return Array(upToHead.filter { $0.id > after }.prefix(limit))
        }
    }

    func remove(_ selection: MessageSelection, limit: Int) async throws -> [ChatMessage] {
        let now = now()
        return state.withLock { state in
            var chosen: [(room: RoomID, index: Int, addedAt: Int64)] = []
            // The writer of the message named, as the PostgreSQL store finds it.
            var sender: SessionID?
            if case .bySenderOf(let message, _, _) = selection, let log = state.logs[message.room],
                let index = log.messages.firstIndex(where: { $0.id == message.id })
            {
                sender = log.authors[index]
            }
            for (room, log) in state.logs where !log.removed && (selection.room == nil || selection.room == room) {
                for (index, message) in log.messages.enumerated() where !message.removed {
                    switch selection {
                    case .message(_, let id) where message.id == id: chosen.append((room, index, message.addedAt))
                    case .bySession(let session, _, let since)
                    where log.authors[index] == session
                        && message.addedAt >= since:
                        chosen.append((room, index, message.addedAt))
                    case .bySenderOf(_, _, let since)
                    where sender != nil && log.authors[index] == sender && message.addedAt >= since:
                        chosen.append((room, index, message.addedAt))
                    default: break
                    }
                }
            }
            let taken = chosen.sorted { ($0.addedAt, $0.room, $0.index) < ($1.addedAt, $1.room, $1.index) }.prefix(
                limit)
            var tombstones: [ChatMessage] = []
            for (room, index, _) in taken {
                let tombstone = state.logs[room]!.messages[index].tombstone
                state.logs[room]!.messages[index] = tombstone
                state.logs[room]!.removedMessages += 1
                if state.outbox[MessageRef(tombstone)] == nil { state.outbox[MessageRef(tombstone)] = now }
                tombstones.append(tombstone)
            }
            let refs = Set(tombstones.map(MessageRef.init))
            for (key, stored) in state.byKey where refs.contains(MessageRef(stored.0)) {
                state.byKey[key] = (stored.0.tombstone, stored.1)
            }
            return tombstones.sorted { ($0.room, $0.id) < ($1.room, $1.id) }
        }
    }

    func remove(_ room: RoomID) async throws { _ = try await remove(rooms: [room]) }

    func remove(rooms: [RoomID]) async throws -> Int {
        state.withLock { state in
            var count = 0
            for room in rooms {
                count += state.logs[room]?.messages.count ?? 0
                state.logs[room] = Log(messages: [], authors: [], removed: true)
            }
            return count
        }
    }

    func messageCounts(_ rooms: [RoomID]) async throws -> [RoomMessageCount] {
        state.withLock { state in
            rooms.map { room in
                RoomMessageCount(room: room, messages: state.logs[room]?.messages.count { !$0.removed } ?? 0)
            }
        }
    }
}
