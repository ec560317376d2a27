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

    init(now: @escaping @Sendable () -> Int64 = WallClock.nowMs) { self.now = now }

    func start(nick: Nickname, key: String) async throws -> (SessionInfo, isNew: Bool) {
        let now = now()
        return rows.withLock { rows in
            if let existing = rows.values.first(where: { $0.startKey == key }) { return (existing.info, false) }
            let info = SessionInfo(id: .random(), nick: nick.value, version: 1)
            rows[info.id] = Row(info: info, startKey: key, lastSeenMs: now)
            return (info, true)
        }
    }

    func find(_ id: SessionID) async throws -> SessionInfo? { rows.withLock { $0[id]?.info } }

    func rename(_ id: SessionID, to nick: Nickname) async throws -> SessionInfo? {
        let now = now()
        return rows.withLock { rows in
            guard var row = rows[id], !row.info.ended else { return nil }
            row.info.nick = nick.value
            row.info.version += 1
            row.lastSeenMs = now
            rows[id] = row
            return row.info
        }
    }

    func end(_ id: SessionID, key: String) async throws -> SessionInfo? {
        rows.withLock { rows in
            guard var row = rows[id] else { return nil }
            if row.info.ended { return row.endKey == key ? row.info : nil }
            row.info.ended = true
            row.info.version += 1
            row.endKey = key
            rows[id] = row
            return row.info
        }
    }

    func touch(_ ids: [SessionID], seenAtMs: Int64, granularityMs: Int64) async throws {
        rows.withLock { rows in
            for id in ids where rows[id].map({ !$0.info.ended && $0.lastSeenMs < seenAtMs - granularityMs }) ?? false {
                rows[id]!.lastSeenMs = max(rows[id]!.lastSeenMs, seenAtMs)
            }
        }
    }

    func expireIdle(lifetimeSeconds: Int, limit: Int) async throws -> [SessionInfo] {
        let cutoff = now() - Int64(lifetimeSeconds) * 1000
        return rows.withLock { rows in
            let idle = rows.values.filter { !$0.info.ended && $0.lastSeenMs < cutoff }
                .sorted { $0.lastSeenMs < $1.lastSeenMs }.prefix(limit)
            return idle.map { row in
                var ended = row.info
                ended.ended = true
                ended.version += 1
                rows[ended.id]!.info = ended
                return ended
            }
        }
    }
}
