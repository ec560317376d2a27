import GeoChatBus
import GeoChatDomain

/// The session service's state: sessions, their nicknames and liveness.
/// `PostgresSessionStore` keeps it; `InMemorySessionStore` (tests) mirrors its rules.
/// Every change is answered with the event staged in the store's outbox in
/// the same transaction (none for a repeat, which changes nothing).
protocol SessionStore: Sendable {
    /// Where the changes' events wait for the broker.
    var outbox: any Outbox<StagedEvent> { get }
    /// Starts a session; a retry with the same key returns the session made the first time.
    func start(nick: Nickname, key: String) async throws -> Announced<SessionInfo>
    /// A session as stored (ended ones too), nil when unknown.
    func find(_ id: SessionID) async throws -> SessionInfo?
    /// The renamed session (version + 1), nil when unknown or ended.
    func rename(_ id: SessionID, to nick: Nickname) async throws -> Announced<SessionInfo>?
    /// Ends a session; a retry with the same key answers the ended session again
    /// (no event). Nil when unknown, or ended by another request.
    func end(_ id: SessionID, key: String) async throws -> Announced<SessionInfo>?
    /// Signs of life: live sessions among `ids` were seen at `seenAtMs` (never
    /// moves back). Only rows whose stored sign of life is older than
    /// `seenAtMs - granularityMs` are written: liveness in PostgreSQL needs to be
    /// only as fine as the idle-session lifetime, not as fine as the polls.
    func touch(_ ids: [SessionID], seenAtMs: Int64, granularityMs: Int64) async throws
    /// Ends up to `limit` live sessions not seen for `lifetimeSeconds`, answering them ended.
    func expireIdle(lifetimeSeconds: Int, limit: Int) async throws -> [Announced<SessionInfo>]
}
