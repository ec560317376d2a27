import GeoChatDomain
import Synchronization

/// Sessions as this gateway knows them: filled by the session service's events
/// and, on a miss, by asking it once. Unknown ids stay unknown (ids are random
/// and only the session service issues them), so they are remembered too.
/// A banned session (by id or nickname, `bans` fed from `geochat.bans`) is refused.
///
/// A bounded cache, not a replica: a session unused here for `idleTTLMs` is
/// forgotten at the next prune, and at most `maxSessions` are held (the least
/// recently used go first). A forgotten session is asked for again on its next
/// request, so forgetting is always safe; memory follows the sessions active
/// through this gateway, not every session there ever was.
package final class SessionDirectory: Sendable {
    private struct Cached {
        var info: SessionInfo
        var usedMs: Int64
    }

    private struct State {
        var sessions: [SessionID: Cached] = [:]
        var unknown: Set<SessionID> = []
        /// Ids being asked of the session service, with the one lookup every
        /// request for that id awaits: their events are kept meanwhile, so a
        /// change that overtakes the answer is not lost.
        var asking: [SessionID: Task<SessionInfo, any Error>] = [:]
    }

    private let state = Mutex(State())
    private let backend: ServiceClients
    package let bans: BanList
    package let maxSessions: Int
    package let idleTTLMs: Int64
    /// Bounds the memory of ids that were never sessions (guessing costs nothing to an attacker).
    package static let maxUnknown = 100_000

    package init(
        backend: ServiceClients, bans: BanList = BanList(), maxSessions: Int = 1_000_000, idleTTLMs: Int64 = 3_600_000
    ) {
        self.backend = backend
        self.bans = bans
        self.maxSessions = maxSessions
        self.idleTTLMs = idleTTLMs
    }

    /// The live session, or `invalid_session`, or `banned`.
    package func resolve(_ id: SessionID) async throws(ProtocolError) -> SessionInfo {
        if let info = try resolveHeld(id) { return info }
        return try checked(try await ask(id))
    }

    /// `resolve` without waiting: the answer when this gateway holds it (the
    /// session, or `invalid_session`, or `banned`), nil when only the session
    /// service can tell (every poll with a session comes here first).
    package func resolveHeld(_ id: SessionID) throws(ProtocolError) -> SessionInfo? {
        let now = WallClock.nowMs()
        let known = state.withLock { state -> SessionInfo?? in
            // One hash for the read and the write.
            if let index = state.sessions.index(forKey: id) {
                state.sessions.values[index].usedMs = now
                return .some(state.sessions.values[index].info)
            }
            if state.unknown.contains(id) { return .some(nil) }
            return nil
        }
        switch known {
        case .some(.some(let info)):
            if info.ended { throw .invalidSession }
            return try checked(info)
        case .some(nil):
            throw .invalidSession
        case nil:
            return nil
        }
    }

    private func checked(_ info: SessionInfo) throws(ProtocolError) -> SessionInfo {
        if bans.isBanned(session: info.id, nick: info.nick) { throw .banned }
        return info
    }

    /// Asks the session service; remembers what it says, unknown ids included.
    /// Requests for one id at the same moment (a sign of life beside the
    /// request's own lookup, a phone's parallel polls) share one `LookupSession`.
    private func ask(_ id: SessionID) async throws(ProtocolError) -> SessionInfo {
        let lookup = state.withLock { state -> Task<SessionInfo, any Error> in
            if let running = state.asking[id] { return running }
            let task = Task { [self] in
                defer { _ = self.state.withLock { $0.asking.removeValue(forKey: id) } }
                return try await lookUpAtTheService(id)
            }
            state.asking[id] = task
            return task
        }
        do {
            return try await lookup.value
        } catch let error as ProtocolError {
            throw error
        } catch {
            throw ProtocolError.unavailable
        }
    }

    private func lookUpAtTheService(_ id: SessionID) async throws(ProtocolError) -> SessionInfo {
        do throws(ProtocolError) {
            let info = try await backend.send(LookupSession(session: id))
            remember(info)
            if info.ended { throw ProtocolError.invalidSession }
            return info
        } catch {
            if error.code == .invalidSession {
                state.withLock { state in
                    guard state.sessions[id] == nil else { return }
                    if state.unknown.count >= Self.maxUnknown { state.unknown.removeAll(keepingCapacity: true) }
                    state.unknown.insert(id)
                }
            }
            throw error
        }
    }

    /// What this gateway knows of a session; never asks anyone.
    package func known(_ id: SessionID) -> SessionInfo? {
        state.withLock { $0.sessions[id]?.info }
    }

    package enum Liveness { case live, notLive, unknownHere }

    /// What this gateway knows of a session's liveness, without asking anyone.
    package func liveness(_ id: SessionID) -> Liveness {
        state.withLock { state in
            if let cached = state.sessions[id] { return cached.info.ended ? .notLive : .live }
            return state.unknown.contains(id) || state.asking[id] != nil ? .notLive : .unknownHere
        }
    }

    /// Takes news of a session unless it is older than what we hold.
    package func remember(_ info: SessionInfo) {
        let now = WallClock.nowMs()
        state.withLock { state in
            if let current = state.sessions[info.id], current.info.version > info.version { return }
            state.sessions[info.id] = Cached(info: info, usedMs: max(now, state.sessions[info.id]?.usedMs ?? 0))
            state.unknown.remove(info.id)
        }
    }

    /// Forgets sessions unused since `nowMs - idleTTLMs`, then the least recently used beyond `maxSessions`.
    package func prune(nowMs: Int64) {
        state.withLock { state in
            let cutoff = nowMs - idleTTLMs
            state.sessions = state.sessions.filter { $0.value.usedMs >= cutoff }
            guard state.sessions.count > maxSessions else { return }
            let excess = state.sessions.count - maxSessions
            for (id, _) in state.sessions.sorted(by: { $0.value.usedMs < $1.value.usedMs }).prefix(excess) {
                state.sessions[id] = nil
            }
        }
    }

    /// News of a session this gateway holds or is asking about; others are not
    /// kept (their next request here asks, and gets the current state).
    package func apply(_ event: SessionEvent) {
        let info = event.session
        let relevant = state.withLock { state in
            state.sessions[info.id] != nil || state.asking[info.id] != nil || state.unknown.contains(info.id)
        }
        if relevant { remember(info) }
    }

    package var count: Int { state.withLock { $0.sessions.count } }
}
