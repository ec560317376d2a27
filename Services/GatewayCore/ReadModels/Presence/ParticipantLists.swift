import GeoChatDomain
import Synchronization

/// A room's present participants for its push subscribers, read once per
/// change however many subscribers ask (`invalidate` on every membership event).
package final class ParticipantLists: Sendable {
    private struct Entry {
        var task: Task<[String]?, Never>
        var at: ContinuousClock.Instant
    }

    private let entries = Mutex<[RoomID: Entry]>([:])
    /// Membership changes seen per room: a subscriber busy writing when one
    /// rang finds it here on its next step (a ring with nobody waiting is lost).
    /// Each change takes the next number of one sequence, never reused, kept a minute.
    private let changes = Mutex<(last: Int, byRoom: [RoomID: (number: Int, at: ContinuousClock.Instant)])>((0, [:]))
    /// A list is read again after this long even without an event (presence runs out silently).
    package static let freshness = Duration.seconds(5)

    package init() {}

    package func current(_ room: RoomID, actions: ChatActions) async -> [String]? {
        let now = ContinuousClock.now
        let task = entries.withLock { entries in
            if let entry = entries[room], now - entry.at < Self.freshness { return entry.task }
            // One read for all the room's subscribers: no client's tokens.
            let task = Task { try? await actions.participants(of: room, client: .unlimited) }
            entries[room] = Entry(task: task, at: now)
            return task
        }
        let nicks = await task.value
        if nicks == nil {
            // A failed read is not kept: the next subscriber to ask reads again.
            entries.withLock { entries in
                if let entry = entries[room], entry.task == task { entries.removeValue(forKey: room) }
            }
        }
        return nicks
    }

    package func invalidate(_ room: RoomID) {
        _ = entries.withLock { $0.removeValue(forKey: room) }
        changes.withLock { state in
            state.last += 1
            state.byRoom[room] = (state.last, .now)
        }
    }

    /// The number of the room's last membership change this gateway saw (0: none in the last minute).
    package func changeCount(_ room: RoomID) -> Int { changes.withLock { $0.byRoom[room]?.number ?? 0 } }

    package func prune(now: ContinuousClock.Instant = .now) {
        entries.withLock { $0 = $0.filter { now - $1.at < Self.freshness } }
        // A subscriber that last saw a forgotten change reads once more: never a missed one.
        changes.withLock { $0.byRoom = $0.byRoom.filter { now - $1.at < .seconds(60) } }
    }
}
