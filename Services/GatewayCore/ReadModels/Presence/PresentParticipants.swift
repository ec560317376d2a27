import GeoChatDomain

/// Who a room lists as present, for `participants` and the admin API alike:
/// its members with a sign of life within the presence timeout (seen by any
/// gateway, or their last join or say as the rooms service recorded it), under
/// their newest nick (the session directory's or the membership's, whichever
/// belongs to the higher session version: renames reach both by two paths, in
/// no fixed order), without ended sessions and banned ones, in plain byte order
/// of the nick. Two sessions with one nick are listed twice.
package enum PresentParticipants {
    package static func nicks(
        of members: [Member],
        isPresent: (Member) -> Bool,
        knownSession: (SessionID) -> SessionInfo?,
        isBanned: (_ session: SessionID, _ nick: String) -> Bool
    ) -> [String] {
        members
            .filter(isPresent)
            .compactMap { member -> Member? in
                guard let known = knownSession(member.session) else { return member }
                if known.ended { return nil }
                guard known.version > member.nickVersion ?? 0 else { return member }
                return Member(session: member.session, nick: known.nick)
            }
            .filter { !isBanned($0.session, $0.nick) }
            .map(\.nick)
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The rule over this gateway's read models, at `nowMs`.
    package static func nicks(
        of members: [Member], presence: PresenceTracker, sessions: SessionDirectory, timeoutMs: Int64, nowMs: Int64
    ) -> [String] {
        nicks(
            of: members,
            isPresent: { member in
                max(presence.lastSeenMs(member.session) ?? 0, member.activeAtMs ?? 0) >= nowMs - timeoutMs
            },
            knownSession: sessions.known,
            isBanned: sessions.bans.isBanned(session:nick:))
    }
}
