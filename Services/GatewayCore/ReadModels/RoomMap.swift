import GeoChatDomain
import Logging
import Synchronization

/// The gateway's region index of every live room: loaded at start from the rooms
/// service page by page (a snapshot, bounded by the rooms alive, not by their
/// history), kept current from room and message events that the event feed
/// reads from before the load begins. `chats` is answered from it, in memory.
///
/// The load and the events may meet in either order, so each update is one that
/// commutes: a room is added once, a visit only moves forward, and a removal
/// seen while loading is remembered so a page read before it cannot bring the
/// room back.
package final class RoomMap: Sendable {
    private struct State {
        var index = RoomIndex()
        var loaded = false
        var removedWhileLoading: Set<RoomID> = []
        /// Visits of rooms not in the index yet (their page has not come).
        var visitsWhileLoading: [RoomID: Int64] = [:]
    }

    private let state = Mutex(State())
    package static let pageSize = ListRoomsPage.maxLimit

    package init() {}

    package var isLoaded: Bool { state.withLock { $0.loaded } }
    package var count: Int { state.withLock { $0.index.count } }

    /// The answer to a region query; nil until loaded (the caller asks the rooms service then).
    package func rooms(in query: RegionQuery) -> [RoomInfo]? {
        state.withLock { $0.loaded ? $0.index.rooms(in: query) : nil }
    }

    /// The rooms nearest a point (`RoomIndex.nearest`); nil until loaded.
    package func nearest(_ query: NearbyQuery) -> [NearbyRoom]? {
        state.withLock { $0.loaded ? $0.index.nearest(query) : nil }
    }

    /// The cells a nearby query would look at (0 before the index is loaded).
    package func cellsLookedAt(by query: NearbyQuery) -> Int {
        state.withLock { $0.loaded ? $0.index.cellsLookedAt(by: query) : 0 }
    }

    /// A live room as the index holds it; nil when it does not (or is not loaded).
    package func room(_ id: RoomID) -> RoomInfo? {
        state.withLock { $0.index.room(id) }
    }

    /// Whether the index holds the room; nil before it is loaded.
    package func knows(_ room: RoomID) -> Bool? {
        state.withLock { $0.loaded ? $0.index.contains(room) : nil }
    }

    /// The cells answering `query` would look at (0 before the index is loaded).
    package func cellsLookedAt(by query: RegionQuery) -> Int {
        state.withLock { $0.loaded ? $0.index.cellsLookedAt(by: query) : 0 }
    }

    package func created(_ room: RoomInfo, atMs: Int64) {
        state.withLock { state in
            guard !state.removedWhileLoading.contains(room.id) else { return }
            state.index.upsert(room, visitedAtMs: atMs)
        }
    }

    /// A join or a message: the room was visited.
    package func visited(_ room: RoomID, atMs: Int64) {
        state.withLock { state in
            if !state.loaded && !state.index.contains(room) {
                state.visitsWhileLoading[room] = max(state.visitsWhileLoading[room] ?? 0, atMs)
            } else {
                state.index.visit(room, atMs: atMs)
            }
        }
    }

    package func removed(_ rooms: [RoomID]) {
        state.withLock { state in
            state.index.remove(contentsOf: rooms)
            if !state.loaded { state.removedWhileLoading.formUnion(rooms) }
        }
    }

    /// One page of the start-up load (merged into the index in one pass).
    package func load(_ page: [IndexedRoom]) {
        state.withLock { state in
            var rooms: [IndexedRoom] = []
            rooms.reserveCapacity(page.count)
            for var entry in page where !state.removedWhileLoading.contains(entry.room.id) {
                entry.visitedAtMs = max(
                    entry.visitedAtMs, state.visitsWhileLoading.removeValue(forKey: entry.room.id) ?? 0)
                rooms.append(entry)
            }
            state.index.upsert(contentsOf: rooms)
        }
    }

    package func finishLoading() {
        state.withLock { state in
            state.loaded = true
            state.removedWhileLoading = []
            state.visitsWhileLoading = [:]
        }
    }

    /// Loads every room, page by page, in `ranges` id ranges side by side (so
    /// several rooms service instances, or cores, share the work), retrying a
    /// page until the rooms service answers. Start it once the event feed reads
    /// (its position fixed first): an event after that is seen, one before is
    /// in the pages; a room above the highest id read at the start was created
    /// after it, so its `created` event is seen.
    package func loadAll(from backend: ServiceClients, ranges: Int, logger: Logger) async {
        let started = ContinuousClock.now
        guard
            let highestID = await untilAnswered(
                logger,
                { () async throws(ProtocolError) in
                    try await backend.send(HighestRoomID())
                })
        else { return }
        // Ranges of ids, split as numbers.
        let highest = highestID.rawValue
        let width = max(highest / Int64(max(ranges, 1)) + 1, 1)
        await withTaskGroup(of: Void.self) { group in
            var lower: Int64 = 0
            while lower < highest {
                let (after, upper) = (RoomID(lower), lower + width)
                // The last range has no upper bound: nothing is missed if ids grew meanwhile.
                let before: RoomID? = upper >= highest ? nil : RoomID(upper + 1)
                group.addTask { await self.load(from: backend, after: after, before: before, logger: logger) }
                lower = upper
            }
        }
        guard !Task.isCancelled else { return }
        finishLoading()
        logger.info(
            "room index loaded",
            metadata: [
                "rooms": "\(count)", "ranges": "\(ranges)",
                "seconds": "\((ContinuousClock.now - started).components.seconds)",
            ])
    }

    /// The rooms with ids above `after` and below `before`, page by page.
    private func load(from backend: ServiceClients, after first: RoomID, before: RoomID?, logger: Logger) async {
        var after = first
        while let page = await untilAnswered(
            logger,
            { () async throws(ProtocolError) in
                try await backend.send(ListRoomsPage(after: after, before: before, limit: Self.pageSize))
            })
        {
            load(page)
            guard let last = page.last, page.count == Self.pageSize else { return }
            after = last.room.id
        }
    }

    /// The answer, asked again until there is one; nil when the task is cancelled.
    private func untilAnswered<Answer>(
        _ logger: Logger, _ ask: () async throws(ProtocolError) -> Answer
    ) async -> Answer? {
        var failures = 0
        while !Task.isCancelled {
            do throws(ProtocolError) {
                return try await ask()
            } catch {
                failures += 1
                if failures == 1 || failures % 20 == 0 {
                    logger.warning("room index load waits for the rooms service", metadata: ["error": "\(error.code)"])
                }
                try? await Task.sleep(for: .milliseconds(min(100 * failures, 1000)))
            }
        }
        return nil
    }
}
