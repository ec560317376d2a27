import GeoChatDomain
import Synchronization

/// Sessions as this gateway knows them: filled by the session service's events
/// and, on a miss, by asking it once. Unknown ids stay unknown (ids are random
/// and only the session service issues them), so they are remembered too.
final class SessionDirectory: Sendable {
    private struct State {
        var sessions: [SessionID: SessionInfo] = [:]
        var unknown: Set<SessionID> = []
    }

    private let state = Mutex(State())
    private let backend: ServiceClients
    /// Bounds the memory of ids that were never sessions (guessing costs nothing to an attacker).
    static let maxUnknown = 100_000

    init(backend: ServiceClients) { self.backend = backend }

    /// The live session, or `invalid_session`.
    func resolve(_ id: SessionID) async throws(ProtocolError) -> SessionInfo {
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
            do throws(ProtocolError) {
                let info = try await backend.session(.lookup(session: id), key: id.value, idempotencyKey: ServiceClients.newKey())
                remember(info)
                if info.ended { throw ProtocolError.invalidSession }
                return info
            } catch {
                if error.code == .invalidSession {
                    state.withLock { state in
                        if state.unknown.count >= Self.maxUnknown { state.unknown.removeAll(keepingCapacity: true) }
                        state.unknown.insert(id)
                    }
                }
                throw error
            }
        }
    }

    /// Takes news of a session unless it is older than what we hold.
    func remember(_ info: SessionInfo) {
        state.withLock { state in
            if let current = state.sessions[info.id], current.version > info.version { return }
            state.sessions[info.id] = info
            state.unknown.remove(info.id)
        }
    }

    func apply(_ event: SessionEvent) {
        switch event {
        case .started(let info), .renamed(let info), .ended(let info, _): remember(info)
        }
    }

    var count: Int { state.withLock { $0.sessions.count } }
}
