import GeoChatBus
import GeoChatDomain
import Synchronization

/// Room logs in memory, by the same rules as `PostgresMessageStore` (the store
/// tests run both): for handler tests.
final class InMemoryMessageStore: MessageStore {
    private struct Log {
        var messages: [ChatMessage] = []
        var removed = false
    }

    private struct State {
        var logs: [RoomID: Log] = [:]
        var byKey: [String: (ChatMessage, SessionID?)] = [:]
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Int64

    init(now: @escaping @Sendable () -> Int64 = WallClock.nowMs) { self.now = now }

    func state(of room: RoomID) async throws -> RoomLogState {
        state.withLock { state in
            guard let log = state.logs[room] else { return .unknown }
            return log.removed ? .removed : .open(head: log.messages.last?.id ?? 0)
        }
    }

    func open(_ room: RoomID) async throws {
        state.withLock { state in if state.logs[room] == nil { state.logs[room] = Log() } }
    }

    func stored(key: String) async throws -> (ChatMessage, author: SessionID?)? {
        state.withLock { $0.byKey[key].map { ($0.0, author: $0.1) } }
    }

    func append(room: RoomID, nick: String, text: String, author: SessionID?, key: String, commitBy: Deadline)
        async throws -> ChatMessage?
    {
        let now = now()
        return try state.withLock { state in
            if state.byKey[key] != nil { throw DuplicateIdempotencyKey() }
            guard let log = state.logs[room], !log.removed else { return nil }
            if commitBy.hasPassed(nowMs: now) { throw ProtocolError.unavailable }
            let message = ChatMessage(room: room, id: (log.messages.last?.id ?? 0) + 1, nick: nick, text: text, addedAt: now)
            state.logs[room]!.messages.append(message)
            state.byKey[key] = (message, author)
            return message
        }
    }

    func history(room: RoomID, head: MessageID, after: MessageID?, limit: Int) async throws -> [ChatMessage] {
        state.withLock { state in
            let upToHead = (state.logs[room]?.messages ?? []).filter { $0.id <= head }
            guard let after else { return Array(upToHead.suffix(limit)) }
            return Array(upToHead.filter { $0.id > after }.prefix(limit))
        }
    }

    func remove(_ room: RoomID) async throws { _ = try await remove(rooms: [room]) }

    func remove(rooms: [RoomID]) async throws -> Int {
        state.withLock { state in
            var count = 0
            for room in rooms {
                count += state.logs[room]?.messages.count ?? 0
                state.logs[room] = Log(messages: [], removed: true)
            }
            return count
        }
    }

    func messageCounts(_ rooms: [RoomID]) async throws -> [RoomMessageCount] {
        state.withLock { state in rooms.map { RoomMessageCount(room: $0, messages: state.logs[$0]?.messages.count ?? 0) } }
    }
}
