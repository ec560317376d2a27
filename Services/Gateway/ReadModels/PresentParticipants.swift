import GeoChatDomain

/// Who a room lists as present, for `participants` and the admin API alike:
/// its members seen within the presence timeout, under the nick the session
/// directory knows (the membership's copy is updated by events of two topics,
/// which may arrive in either order), without ended sessions and banned ones,
/// in plain byte order of the nick. Two sessions with one nick are listed twice.
enum PresentParticipants {
    static func nicks(
        of members: [Member],
        isPresent: (SessionID) -> Bool,
        knownSession: (SessionID) -> SessionInfo?,
        isBanned: (_ session: SessionID, _ nick: String) -> Bool
    ) -> [String] {
        members
            .filter { isPresent($0.session) }
            .compactMap { member -> Member? in
                guard let known = knownSession(member.session) else { return member }
                return known.ended ? nil : Member(session: member.session, nick: known.nick)
            }
            .filter { !isBanned($0.session, $0.nick) }
            .map(\.nick)
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The rule over this gateway's read models, at `nowMs`.
    static func nicks(
        of members: [Member], presence: PresenceTracker, sessions: SessionDirectory, timeoutMs: Int64, nowMs: Int64
    ) -> [String] {
        nicks(
            of: members,
            isPresent: { presence.isPresent($0, nowMs: nowMs, timeoutMs: timeoutMs) },
            knownSession: sessions.known,
            isBanned: sessions.bans.isBanned(session:nick:))
    }
}
