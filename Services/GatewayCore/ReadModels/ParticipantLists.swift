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
    }

    package func prune(now: ContinuousClock.Instant = .now) {
        entries.withLock { $0 = $0.filter { now - $1.at < Self.freshness } }
    }
}
