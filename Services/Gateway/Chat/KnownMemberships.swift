import GeoChatDomain
import Synchronization

/// Memberships this gateway saw the rooms service acknowledge lately, so that
/// a member's next `say` need not join the room again.
///
/// A `say` joins its author side by side with the post, so the sayer is a
/// member before the say is answered (read-your-writes). For someone already
/// a member that join changes nothing, yet it cost a command, a PostgreSQL
/// transaction and a `joined` event, which woke every push subscriber of the
/// room to read its participants again: more than the say itself.
///
/// Knowing a membership is a hint, never the truth: a `left` event (or a leave
/// through this gateway) forgets it, and it is trusted for `freshness` only,
/// half the presence timeout, from the last join or say: either marks its
/// member present (`active_at`) for the whole timeout, so a say within the
/// first half still finds its sayer listed everywhere (the other half is room
/// for the rooms service to apply a say's message event). Were it stale (a
/// leave through another gateway whose event has not come yet, tens of
/// milliseconds), the say's own message event still makes the membership
/// moments later (the rooms service's activity feed); only the
/// read-your-writes of that one say is lost.
///
/// Cost: one entry (room, session id, instant) per member who said something within
/// the window through this gateway; a sayer whose says alternate between
/// gateways is joined once per gateway per window.
final class KnownMemberships: Sendable {
    private struct Key: Hashable {
        let room: RoomID
        let session: SessionID
    }

    private let known = Mutex<[Key: ContinuousClock.Instant]>([:])
    /// How long a membership is trusted (read at each use: the presence timeout is a live setting).
    private let freshness: @Sendable () -> Duration
    /// At most this many are kept; past it a say joins as it would without them.
    let capacity: Int

    init(freshness: @escaping @Sendable () -> Duration, capacity: Int = 200_000) {
        self.freshness = freshness
        self.capacity = capacity
    }

    /// Whether `session` was acknowledged a member of `room` within `freshness`.
    func isMember(_ session: SessionID, of room: RoomID, now: ContinuousClock.Instant = .now) -> Bool {
        let freshness = freshness()
        return known.withLock { known in
            guard let at = known[Key(room: room, session: session)] else { return false }
            return now - at < freshness
        }
    }

    /// The membership holds as of `now`: the rooms service acknowledged a
    /// join, or a member said something (its message event renews the
    /// membership's `active_at` as a join does).
    func confirmed(_ session: SessionID, _ room: RoomID, now: ContinuousClock.Instant = .now) {
        known.withLock { known in
            let key = Key(room: room, session: session)
            guard known[key] != nil || known.count < capacity else { return }
            known[key] = now
        }
    }

    /// The membership ended (a leave, through any gateway).
    func left(_ session: SessionID, _ room: RoomID) {
        _ = known.withLock { $0.removeValue(forKey: Key(room: room, session: session)) }
    }

    /// Forgets those older than `freshness`.
    func prune(now: ContinuousClock.Instant = .now) {
        let freshness = freshness()
        known.withLock { known in known = known.filter { now - $1 < freshness } }
    }

    var count: Int { known.withLock { $0.count } }
}
