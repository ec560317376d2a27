import GeoChatDomain
import Logging

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
        /// Operators' changes seen while loading: a page read before one cannot undo it.
        var changedWhileLoading: [RoomID: RoomInfo] = [:]
    }

    /// Region queries on every event loop read side by side; events write.
    private let state = ReadWriteLocked(State())
    package static let pageSize = ListRoomsPage.maxLimit

    package init() {}

    package var isLoaded: Bool { state.read { $0.loaded } }
    package var count: Int { state.read { $0.index.count } }
    package var tally: RoomTally { state.read { $0.index.tally } }

    /// How long before a snapshot began its catch-up looks for changes: an
    /// event still on its way to this gateway then (Kafka away for a while),
    /// and a rooms service clock behind this one, fall inside it.
    package static let snapshotMargin: Duration = .seconds(600)

    /// The answer to a region query; nil until loaded (the caller asks the rooms service then).
    package func rooms(in query: RegionQuery) -> [RoomInfo]? {
        withRooms(in: query) { $0.infos }
    }

    /// The answer to a region query lent to `body` under the lock (`LentRooms`); nil until loaded.
    package func withRooms<Result>(in query: RegionQuery, _ body: (LentRooms) -> Result) -> Result? {
        state.read { $0.loaded ? $0.index.withRooms(in: query, body) : nil }
    }

    /// The rooms nearest a point (`RoomIndex.nearest`); nil until loaded.
    package func nearest(_ query: NearbyQuery) -> [NearbyRoom]? {
        state.read { $0.loaded ? $0.index.nearest(query) : nil }
    }

    /// The cells a nearby query would look at (0 before the index is loaded).
    package func cellsLookedAt(by query: NearbyQuery) -> Int {
        state.read { $0.loaded ? $0.index.cellsLookedAt(by: query) : 0 }
    }

    /// A live room as the index holds it; nil when it does not (or is not loaded).
    package func room(_ id: RoomID) -> RoomInfo? {
        state.read { $0.index.room(id) }
    }

    /// Whether the index holds the room; nil before it is loaded.
    package func knows(_ room: RoomID) -> Bool? {
        state.read { $0.loaded ? $0.index.contains(room) : nil }
    }

    /// The cells answering `query` would look at (0 before the index is loaded).
    package func cellsLookedAt(by query: RegionQuery) -> Int {
        state.read { $0.loaded ? $0.index.cellsLookedAt(by: query) : 0 }
    }

    package func created(_ room: RoomInfo, atMs: Int64) {
        state.write { state in
            guard !state.removedWhileLoading.contains(room.id) else { return }
            state.index.upsert(room, visitedAtMs: atMs)
        }
    }

    /// An operator changed the room's topic, place or zoom level.
    package func changed(_ room: RoomInfo) {
        state.write { state in
            if !state.loaded { state.changedWhileLoading[room.id] = room }
            state.index.replace(room)
        }
    }

    /// A join or a message: the room was visited.
    package func visited(_ room: RoomID, atMs: Int64) {
        state.write { state in
            if !state.loaded && !state.index.contains(room) {
                state.visitsWhileLoading[room] = max(state.visitsWhileLoading[room] ?? 0, atMs)
            } else {
                state.index.visit(room, atMs: atMs)
            }
        }
    }

    package func removed(_ rooms: [RoomID]) {
        state.write { state in
            state.index.remove(contentsOf: rooms)
            if !state.loaded { state.removedWhileLoading.formUnion(rooms) }
        }
    }

    /// One page of the start-up load (merged into the index in one pass).
    package func load(_ page: [IndexedRoom]) {
        state.write { state in
            var rooms: [IndexedRoom] = []
            rooms.reserveCapacity(page.count)
            for var entry in page where !state.removedWhileLoading.contains(entry.room.id) {
                if let changed = state.changedWhileLoading[entry.room.id] { entry.room = changed }
                entry.visitedAtMs = max(
                    entry.visitedAtMs, state.visitsWhileLoading.removeValue(forKey: entry.room.id) ?? 0)
                rooms.append(entry)
            }
            state.index.upsert(contentsOf: rooms)
        }
    }

    /// Writes the loaded index, `chunkSlots` slots at a time under the lock,
    /// so an event waits for one chunk at most (queries read beside it); nil
    /// when not loaded. The chunks are not one instant: a room made or visited
    /// meanwhile may be missed, and it lies inside the catch-up window of
    /// `takenAtMs`; a room removed meanwhile may be written, and its removal is
    /// in that window too.
    package func writeSnapshot(
        takenAtMs: Int64, chunkSlots: Int = 16_384, _ emit: ([UInt8]) throws -> Void
    ) rethrows -> Int? {
        guard isLoaded else { return nil }
        var writer = RoomSnapshot.Writer(takenAtMs: takenAtMs)
        var slot = 0
        while true {
            let more = state.read { state in
                state.index.forEachRoom(inSlots: slot..<slot + chunkSlots) { writer.append($0, topic: $1) }
                return slot + chunkSlots < state.index.slotCapacity
            }
            try emit(writer.takeBytes())
            guard more else { break }
            slot += chunkSlots
        }
        try emit(writer.finish())
        return writer.rooms
    }

    /// Drops what a snapshot loaded, keeping what events said while loading
    /// (removals, visits): the full load comes next.
    private func discardLoaded() {
        state.write { $0.index = RoomIndex() }
    }

    /// False when the index could not be laid out by cell (`RoomIndex.layOutByCell`): it answers as it is.
    @discardableResult
    package func finishLoading() -> Bool {
        state.write { state in
            let laidOut = state.index.layOutByCell()
            state.loaded = true
            state.removedWhileLoading = []
            state.visitsWhileLoading = [:]
            state.changedWhileLoading = [:]
            return laidOut
        }
    }

    /// Loads every room, page by page, in `ranges` id ranges side by side (so
    /// several rooms service instances, or cores, share the work), retrying a
    /// page until the rooms service answers. Start it once the event feed reads
    /// (its position fixed first): an event after that is seen, one before is
    /// in the pages; a room above the highest id read at the start was created
    /// after it, so its `created` event is seen. With a snapshot, its rooms
    /// first, then only what changed since (`catchUp`); every room when that
    /// fails. Nil when cancelled before the end.
    @discardableResult
    package func loadAll(
        from backend: ServiceClients, ranges: Int, snapshot: RoomSnapshot.Contents? = nil, logger: Logger
    ) async -> RoomIndexLoad? {
        let started = ContinuousClock.now
        var load = RoomIndexLoad.everyRoom
        if let snapshot {
            snapshot.forEachPage(size: Self.pageSize) { self.load($0) }
            if await catchUp(after: snapshot, from: backend, ranges: ranges, logger: logger) {
                load = .snapshot(rooms: snapshot.rooms, ageMs: WallClock.nowMs() - snapshot.takenAtMs)
            } else {
                guard !Task.isCancelled else { return nil }
                discardLoaded()
            }
        }
        if load == .everyRoom {
            await pages(from: backend, ranges: ranges, changes: nil, logger: logger)
        }
        guard !Task.isCancelled else { return nil }
        if !finishLoading() {
            logger.error("room index not laid out by cell: its grids and id table disagree; answering as loaded")
        }
        var metadata: Logger.Metadata = [
            "rooms": "\(count)", "ranges": "\(ranges)",
            "seconds": "\((ContinuousClock.now - started).components.seconds)",
        ]
        if case .snapshot(let rooms, let ageMs) = load {
            metadata["snapshot_rooms"] = "\(rooms)"
            metadata["snapshot_age_s"] = "\(ageMs / 1000)"
        }
        logger.info(
            load == .everyRoom ? "room index loaded" : "room index loaded from its snapshot", metadata: metadata)
        return load
    }

    /// Every room (`changes` nil) or those in the window, in `ranges` id ranges side by side.
    private func pages(from backend: ServiceClients, ranges: Int, changes: RoomChangeWindow?, logger: Logger) async {
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
                group.addTask {
                    await self.load(from: backend, after: after, before: before, changes: changes, logger: logger)
                }
                lower = upper
            }
        }
    }

    /// After a snapshot was loaded: the rooms made or visited since it began
    /// (minus `snapshotMargin`) and those removed since, from the rooms
    /// service; true when the index then holds what the rooms service holds
    /// (`RoomTally`; asked a few times, as events of changes made meanwhile
    /// may still be on their way). False: load every room instead.
    private func catchUp(
        after snapshot: RoomSnapshot.Contents, from backend: ServiceClients, ranges: Int, logger: Logger
    ) async -> Bool {
        let window = RoomChangeWindow(
            sinceMs: snapshot.takenAtMs - Int64(Self.snapshotMargin.components.seconds) * 1000,
            above: snapshot.highestID)
        await pages(from: backend, ranges: ranges, changes: window, logger: logger)
        var after: RoomID = 0
        while true {
            guard
                let gone = await answered(
                    logger,
                    { () async throws(ProtocolError) in
                        try await backend.send(
                            ListRemovedRooms(sinceMs: window.sinceMs, after: after, limit: ListRemovedRooms.maxLimit))
                    })
            else { return false }
            removed(gone)
            guard let last = gone.last, gone.count == ListRemovedRooms.maxLimit else { break }
            after = last
        }
        for attempt in 1...Self.tallyAttempts {
            guard
                let theirs = await answered(
                    logger, { () async throws(ProtocolError) in try await backend.send(TallyRooms()) })
            else { return false }
            let ours = tally
            if theirs == ours { return true }
            if attempt == Self.tallyAttempts {
                logger.warning(
                    "room snapshot and the rooms service disagree; loading every room",
                    metadata: [
                        "rooms": "\(ours.count)", "rooms_service_rooms": "\(theirs.count)",
                    ])
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
        return false
    }

    static let tallyAttempts = 5
    /// Asks of the catch-up are tried this often before the full load takes over
    /// (a rooms service that predates them refuses them every time).
    static let catchUpAttempts = 20

    /// The rooms with ids above `after` and below `before`, page by page.
    private func load(
        from backend: ServiceClients, after first: RoomID, before: RoomID?, changes: RoomChangeWindow?, logger: Logger
    ) async {
        var after = first
        while let page = await untilAnswered(
            logger,
            { () async throws(ProtocolError) in
                try await backend.send(
                    ListRoomsPage(after: after, before: before, limit: Self.pageSize, changes: changes))
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
        await asked(logger, giveUpAfter: nil, ask)
    }

    /// The answer, asked again a few times; nil when there is none (the caller loads every room).
    private func answered<Answer>(
        _ logger: Logger, _ ask: () async throws(ProtocolError) -> Answer
    ) async -> Answer? {
        await asked(logger, giveUpAfter: Self.catchUpAttempts, ask)
    }

    /// Asks until answered, cancelled, or (with a limit) refused that many times; logs the first
    /// failure and every 20th, and giving up.
    private func asked<Answer>(
        _ logger: Logger, giveUpAfter limit: Int?, _ ask: () async throws(ProtocolError) -> Answer
    ) async -> Answer? {
        var failures = 0
        while !Task.isCancelled {
            do throws(ProtocolError) {
                return try await ask()
            } catch {
                failures += 1
                if let limit, failures >= limit {
                    logger.warning(
                        "room snapshot catch-up gets no answer; loading every room",
                        metadata: ["error": "\(error.code)"])
                    return nil
                }
                if failures == 1 || failures % 20 == 0 {
                    logger.warning("room index load waits for the rooms service", metadata: ["error": "\(error.code)"])
                }
                try? await Task.sleep(for: .milliseconds(min(100 * failures, 1000)))
            }
        }
        return nil
    }
}

/// How a gateway's region index was loaded at start.
package enum RoomIndexLoad: Equatable, Sendable {
    /// Page by page from the rooms service: no usable snapshot, or one the rooms service's tally refuted.
    case everyRoom
    /// From the snapshot (`rooms`, taken `ageMs` before), then what changed since.
    case snapshot(rooms: Int, ageMs: Int64)
}
