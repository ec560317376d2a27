import GeoChatDomain
import Synchronization

/// Sessions as this gateway knows them: filled by the session service's events
/// and, on a miss, by asking it once. Unknown ids stay unknown (ids are random
/// and only the session service issues them), so they are remembered too.
/// A banned session (by id or nickname, `bans` fed from `geochat.bans`) is refused.
final class SessionDirectory: Sendable {
    private struct State {
        var sessions: [SessionID: SessionInfo] = [:]
        var unknown: Set<SessionID> = []
    }

    private let state = Mutex(State())
    private let backend: ServiceClients
    let bans: BanList
    /// Bounds the memory of ids that were never sessions (guessing costs nothing to an attacker).
    static let maxUnknown = 100_000

    init(backend: ServiceClients, bans: BanList = BanList()) {
        self.backend = backend
        self.bans = bans
    }

    /// The live session, or `invalid_session`, or `banned`.
    func resolve(_ id: SessionID) async throws(ProtocolError) -> SessionInfo {
        let info = try await lookUp(id)
        if bans.isBanned(session: info.id, nick: info.nick) { throw .banned }
        return info
    }

    /// The live session, or `invalid_session`.
    private func lookUp(_ id: SessionID) async throws(ProtocolError) -> SessionInfo {
        let known = state.withLock { state -> SessionInfo?? in
            if let info = state.sessions[id] { return .some(info) }
            if state.unknown.contains(id) { return .some(nil) }
            return nil
        }
        switch known {
        case .some(.some(let info)):
            if info.ended { throw .invalidSession }
            return info
        case .some(nil):
            throw .invalidSession
        case nil:
            return try await ask(id)
        }
    }

    /// Asks the session service; remembers what it says, unknown ids included.
    private func ask(_ id: SessionID) async throws(ProtocolError) -> SessionInfo {
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
    func known(_ id: SessionID) -> SessionInfo? {
        state.withLock { $0.sessions[id] }
    }

    func knownLive(_ id: SessionID) -> Bool { known(id).map { !$0.ended } ?? false }

    /// Takes news of a session unless it is older than what we hold.
    func remember(_ info: SessionInfo) {
        state.withLock { state in
            if let current = state.sessions[info.id], current.version > info.version { return }
            state.sessions[info.id] = info
            state.unknown.remove(info.id)
        }
    }

    func apply(_ event: SessionEvent) { remember(event.session) }

    var count: Int { state.withLock { $0.sessions.count } }
}
