import GeoChatBus
import GeoChatDomain
import Synchronization

/// Sessions in memory, by the same rules as `PostgresSessionStore` (the store
/// tests run both): for handler tests and a database-free run of the logic.
final class InMemorySessionStore: SessionStore {
    private struct Row {
        var info: SessionInfo
        var startKey: String
        var endKey: String?
        var lastSeenMs: Int64
    }

    private let rows = Mutex<[SessionID: Row]>([:])
    /// The store's clock (milliseconds since 1970); tests move it.
    private let now: @Sendable () -> Int64

    let events: InMemoryEventOutbox
    var outbox: any Outbox<StagedEvent> { events }

    init(now: @escaping @Sendable () -> Int64 = WallClock.nowMs) {
        self.now = now
        self.events = InMemoryEventOutbox(now: now)
    }

    /// Staged under the rows' lock, as a transaction would.
    private func stage(_ event: SessionEvent) throws -> StagedEvent { events.stage(try EncodedEvent(event)) }

    func start(nick: Nickname, key: String) async throws -> Announced<SessionInfo> {
        let now = now()
        return try rows.withLock { rows in
            if let existing = rows.values.first(where: { $0.startKey == key }) {
                return Announced(existing.info, event: nil)
            }
            let info = SessionInfo(id: .random(), nick: nick.value, version: 1)
            rows[info.id] = Row(info: info, startKey: key, lastSeenMs: now)
            return Announced(info, event: try stage(.started(info)))
        }
    }

    func find(_ id: SessionID) async throws -> SessionInfo? { rows.withLock { $0[id]?.info } }

    func rename(_ id: SessionID, to nick: Nickname) async throws -> Announced<SessionInfo>? {
        let now = now()
        return try rows.withLock { rows in
            guard var row = rows[id], !row.info.ended else { return nil }
            row.info.nick = nick.value
            row.info.version += 1
            row.lastSeenMs = now
            rows[id] = row
            return Announced(row.info, event: try stage(.renamed(row.info)))
        }
    }

    func end(_ id: SessionID, key: String) async throws -> Announced<SessionInfo>? {
        try rows.withLock { rows in
            guard var row = rows[id] else { return nil }
            if row.info.ended { return row.endKey == key ? Announced(row.info, event: nil) : nil }
            row.info.ended = true
            row.info.version += 1
            row.endKey = key
            rows[id] = row
            return Announced(row.info, event: try stage(.ended(row.info, reason: "end")))
        }
    }

    func touch(_ ids: [SessionID], seenAtMs: Int64, granularityMs: Int64) async throws {
        rows.withLock { rows in
            for id in ids where rows[id].map({ !$0.info.ended && $0.lastSeenMs < seenAtMs - granularityMs }) ?? false {
                rows[id]!.lastSeenMs = max(rows[id]!.lastSeenMs, seenAtMs)
            }
        }
    }

    func expireIdle(lifetimeSeconds: Int, limit: Int) async throws -> [Announced<SessionInfo>] {
        let cutoff = now() - Int64(lifetimeSeconds) * 1000
        return try rows.withLock { rows in
            let idle = rows.values.filter { !$0.info.ended && $0.lastSeenMs < cutoff }
                .sorted { $0.lastSeenMs < $1.lastSeenMs }.prefix(limit)
            return try idle.map { row in
                var ended = row.info
                ended.ended = true
                ended.version += 1
                rows[ended.id]!.info = ended
                return Announced(ended, event: try stage(.ended(ended, reason: "idle")))
            }
        }
    }
}
