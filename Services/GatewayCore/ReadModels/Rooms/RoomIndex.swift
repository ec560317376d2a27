import GeoChatDomain

/// Live rooms by zoom level and place, each place cell kept in last-visit
/// order, so a region query takes the `cap` most recently visited rooms of a
/// box by merging the cells the box covers: it never looks at a room outside
/// them, and never sorts the rooms inside. Pure; `RoomMap` holds one behind a
/// lock and feeds it from room and message events.
///
/// Why a grid per zoom level (docs/architecture.md, the read side): a query names
/// a zoom range, so levels are apart anyway; a room of zoom z is looked at in
/// boxes about 2^-z of the world wide, so cells 2^-(z+2) wide make a phone's
/// box cover at most a few hundred cells at the deepest level it asks and one
/// to four at the shallowest. A level's empty cells cost nothing; a box
/// covering more cells than the level has non-empty ones looks at those instead.
///
/// Storage (issue 28, a million rooms in 300 MB): each room is a 40-byte record
/// in one array of slots (`RoomRecord`), its topic in one byte buffer
/// (`TopicBuffer`), found by id through an open-addressing table of slots
/// (`RoomSlotMap`); a grid holds 8 bytes a room (`RoomGridLevel`). A removed
/// room's slot is reused by the next room added.
package struct RoomIndex {
    private var records: [RoomRecord] = []
    /// Slots of removed rooms, reused before the records grow.
    private var freeSlots: [Int32] = []
    private var slots = RoomSlotMap()
    private var topics = TopicBuffer()
    /// The rooms' ids summed with wrapping arithmetic (`RoomTally`).
    private var idSum: UInt64 = 0
    private var levels: [RoomGridLevel] = ZoomLevel.range.map {
        RoomGridLevel(bits: RoomIndex.cellBits(zoom: $0), byVisit: true)
    }
    /// Every room by place alone, for nearby search: a radius names no zoom, and
    /// the levels' deep grids would make a radius of tens of kilometres look at
    /// tens of thousands of mostly empty cells per level (27 ms p99 over a
    /// million rooms for 50 km, docs/benchmarks.md). Cells are 2^-12 of the
    /// world (about 10 km at the equator): a few for a town's radius, ~300 for 50 km.
    private var places = RoomGridLevel(bits: RoomIndex.placeBits, byVisit: false)
    package static let placeBits = 12

    /// A batch of at least this many removals is filtered out of the grids in one
    /// pass rather than removed room by room (each moves a grid's tail).
    static let bulkRemoval = 16

    /// Cell side at zoom `z`: 2^-(z+2) of the world, at most 2^-16 (~600 m at the equator).
    package static func cellBits(zoom: Int) -> Int { min(zoom + 2, 16) }

    package init() {}

    package var count: Int { slots.count }

    /// The slots the records hold, free ones included (they are reused first).
    package var slotCapacity: Int { records.count }

    /// Free slots, waiting for the next rooms.
    package var freeSlotCount: Int { freeSlots.count }

    /// Bytes of the topic buffer, removed rooms' topics not compacted yet included.
    package var topicBytes: Int { topics.byteCount }

    /// Buckets of the id → slot table.
    package var idTableCapacity: Int { slots.capacity }

    /// How many rooms and the checksum of their ids, to compare with the rooms service's.
    package var tally: RoomTally { RoomTally(count: count, wrappingIDSum: idSum) }

    /// Each room in slots `range` (free slots skipped), with its topic's UTF-8: what a snapshot writes.
    func forEachRoom(inSlots range: Range<Int>, _ body: (RoomRecord, UnsafeBufferPointer<UInt8>) -> Void) {
        for slot in range.clamped(to: records.indices) where !records[slot].isFree {
            let record = records[slot]
            topics.withBytes(offset: record.topicOffset, length: record.topicLength) { body(record, $0) }
        }
    }

    package func contains(_ id: RoomID) -> Bool { slots.slot(of: id.rawValue, in: records) != nil }

    package func room(_ id: RoomID) -> RoomInfo? {
        slots.slot(of: id.rawValue, in: records).map(info)
    }

    package func visitedAtMs(_ id: RoomID) -> Int64? {
        slots.slot(of: id.rawValue, in: records).map { records[Int($0)].visitedAtMs }
    }

    private func info(_ slot: Int32) -> RoomInfo {
        let record = records[Int(slot)]
        return RoomInfo(
            id: RoomID(record.id), position: record.position, zoom: record.zoomLevel,
            topic: topics.string(offset: record.topicOffset, length: record.topicLength))
    }

    /// Adds a room, or moves a known one's last visit forward.
    package mutating func upsert(_ room: RoomInfo, visitedAtMs: Int64) {
        guard !contains(room.id) else { return visit(room.id, atMs: visitedAtMs) }
        let slot = store(room, visitedAtMs)
        levels[room.zoom.value].insert(slot, records)
        places.insert(slot, records)
    }

    /// A known room's new topic, place or zoom level (an operator's change); its last visit stays.
    package mutating func replace(_ room: RoomInfo) {
        guard let visited = visitedAtMs(room.id), self.room(room.id) != room else { return }
        remove(room.id)
        upsert(room, visitedAtMs: visited)
    }

    /// `upsert` of each, the new rooms merged into each grid in one pass (a page of
    /// the start-up load: room by room, each would move a grid's tail). A known
    /// room whose topic, place or zoom level differ is changed (`replace`).
    package mutating func upsert(contentsOf rooms: [IndexedRoom]) {
        var added: [Int32] = []
        var byZoom = [[Int32]](repeating: [], count: levels.count)
        var visits: [IndexedRoom] = []
        for entry in rooms {
            if contains(entry.room.id) {
                replace(entry.room)
                visits.append(entry)
            } else {
                let slot = store(entry.room, entry.visitedAtMs)
                added.append(slot)
                byZoom[entry.room.zoom.value].append(slot)
            }
        }
        for (zoom, new) in byZoom.enumerated() where !new.isEmpty { levels[zoom].insert(contentsOf: new, records) }
        places.insert(contentsOf: added, records)
        for entry in visits { visit(entry.room.id, atMs: entry.visitedAtMs) }
    }

    /// A record for a new room, in a free slot if there is one; in the id table, not yet in the grids.
    private mutating func store(_ room: RoomInfo, _ visitedAtMs: Int64) -> Int32 {
        let topic = topics.append(room.topic)
        let record = RoomRecord(
            id: room.id.rawValue, x: room.position.x, y: room.position.y, visitedAtMs: visitedAtMs,
            topicOffset: topic.offset, topicLength: topic.length, zoom: UInt8(room.zoom.value))
        idSum &+= UInt64(bitPattern: room.id.rawValue)
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
            records[Int(slot)] = record
        } else {
            precondition(records.count < Int(Int32.max), "slots are 32-bit")
            slot = Int32(records.count)
            records.append(record)
        }
        slots.insert(slot, in: records)
        return slot
    }

    /// Lays the records out in the order queries read them (zoom level, cell,
    /// last visit), their topics in the same order, so the rooms of a cell are
    /// neighbours in memory: loaded in id order, each room a query takes was a
    /// wait on memory of its own (docs/benchmarks.md, `chats` over a million
    /// rooms). Free slots are dropped. Run once the start-up load is in; later
    /// rooms take free slots or the end, as before. False, and nothing changed,
    /// when the grids do not hold each room once (a fault of the index's own:
    /// its answers stay as they were rather than a gateway failing to start).
    @discardableResult
    package mutating func layOutByCell() -> Bool {
        var moved = [Int32](repeating: -1, count: records.count)
        var laidOut: [RoomRecord] = []
        laidOut.reserveCapacity(slots.count)
        var laidOutTopics = TopicBuffer()
        laidOutTopics.reserveCapacity(topics.byteCount - topics.garbage)
        // Each room is in the level of its zoom, and in one only.
        for level in levels {
            for entry in level.entries {
                guard moved[Int(entry.slot)] == -1, !records[Int(entry.slot)].isFree else { return false }
                var record = records[Int(entry.slot)]
                topics.withBytes(offset: record.topicOffset, length: record.topicLength) {
                    (record.topicOffset, record.topicLength) = laidOutTopics.append($0)
                }
                moved[Int(entry.slot)] = Int32(laidOut.count)
                laidOut.append(record)
            }
        }
        // Each live room once, and nothing else: distinct, none free, as many as the id table holds.
        guard laidOut.count == slots.count, places.entries.allSatisfy({ moved[Int($0.slot)] != -1 }) else {
            return false
        }
        records = laidOut
        topics = laidOutTopics
        freeSlots = []
        for z in levels.indices { levels[z].renumber(moved) }
        places.renumber(moved)
        slots.renumber(moved)
        return true
    }

    /// A visit moves the room forward in its cell; an older one changes nothing.
    package mutating func visit(_ id: RoomID, atMs: Int64) {
        guard let slot = slots.slot(of: id.rawValue, in: records), atMs > records[Int(slot)].visitedAtMs else {
            return
        }
        levels[Int(records[Int(slot)].zoom)].moveForward(slot, toVisit: atMs, records)
        records[Int(slot)].visitedAtMs = atMs
    }

    package mutating func remove(_ id: RoomID) {
        guard let slot = slots.slot(of: id.rawValue, in: records) else { return }
        levels[Int(records[Int(slot)].zoom)].remove(slot, records)
        places.remove(slot, records)
        release(slot)
        afterRemovals()
    }

    /// `remove` of each; a batch of `bulkRemoval` or more (an expiry run's) is
    /// filtered out of the grids in one pass.
    package mutating func remove(contentsOf ids: [RoomID]) {
        guard ids.count >= Self.bulkRemoval else {
            for id in ids { remove(id) }
            return
        }
        var removed: [Int32] = []
        var byZoom = [[Int32]](repeating: [], count: levels.count)
        for id in ids {
            guard let slot = slots.slot(of: id.rawValue, in: records) else { continue }
            removed.append(slot)
            byZoom[Int(records[Int(slot)].zoom)].append(slot)
        }
        guard !removed.isEmpty else { return }
        // Out of the grids while the records still say where each room is.
        for (zoom, gone) in byZoom.enumerated() where !gone.isEmpty { levels[zoom].remove(contentsOf: gone, records) }
        places.remove(contentsOf: removed, records)
        for slot in removed where !records[Int(slot)].isFree { release(slot) }
        afterRemovals()
    }

    /// Frees a room's slot: out of the id table, its topic's bytes garbage, the slot reusable.
    private mutating func release(_ slot: Int32) {
        slots.remove(records[Int(slot)].id, in: records)
        idSum &-= UInt64(bitPattern: records[Int(slot)].id)
        topics.release(length: records[Int(slot)].topicLength)
        records[Int(slot)].zoom = RoomRecord.free
        records[Int(slot)].topicLength = 0
        freeSlots.append(slot)
    }

    private mutating func afterRemovals() {
        // The last room gone: every buffer goes back to the allocator.
        if slots.count == 0 {
            self = RoomIndex()
        } else if topics.needsCompaction {
            topics.compact(&records)
        }
    }

    /// The rooms inside the box (edges included) and zoom range, ordered by id;
    /// at most `cap`, the most recently visited ones when more match (ties: the
    /// higher id), as `PostgresRoomStore.region` answers.
    package func rooms(in query: RegionQuery) -> [RoomInfo] {
        withRooms(in: query) { $0.infos }
    }

    /// `rooms(in:)`'s answer lent to `body` as the index holds it (`LentRooms`).
    package func withRooms<Result>(in query: RegionQuery, _ body: (LentRooms) -> Result) -> Result {
        guard query.cap > 0 else { return body(LentRooms([])) }
        var sources = CellMerge(box: query.box, records: records)
        for z in query.zooms.clamped(to: ZoomLevel.range) {
            let level = levels[z]
            level.forEachCell(in: query.box) { cell, whole in sources.add(level.entries, cell, whole: whole) }
        }
        // Sorted as ids and slots: no room or topic moved.
        let found = sources.takeMostRecent(query.cap).sorted { $0.id < $1.id }
        return body(LentRooms(found: found, records: records, topics: topics))
    }

    /// How many cells `rooms(in:)` looks at for this query: its cost, whatever
    /// it answers (a phone's screen covers at most a few thousand; the whole
    /// world at every zoom covers every non-empty cell there is).
    package func cellsLookedAt(by query: RegionQuery) -> Int {
        query.zooms.clamped(to: ZoomLevel.range).reduce(0) { $0 + levels[$1].cellsLookedAt(query.box) }
    }

    /// The rooms nearest the query's point that it admits, nearest first (ties:
    /// the lower id); at most `limit`. Looks at the place cells of the boxes
    /// around the radius only (`NearbyQuery.boxes`), and keeps the best `limit` as it goes.
    package func nearest(_ query: NearbyQuery) -> [NearbyRoom] {
        var best = NearestRooms(limit: query.limit)
        for box in query.boxes {
            places.forEachCell(in: box) { cell, whole in
                for at in cell {
                    let slot = places.entries[at].slot
                    let item = records[Int(slot)]
                    if !whole && !(item.x >= box.minX && item.x <= box.maxX && item.y >= box.minY && item.y <= box.maxY)
                    {
                        continue
                    }
                    guard query.zooms.contains(Int(item.zoom)) else { continue }
                    let place = GeoPoint(MercatorPoint(x: item.x, y: item.y)!)
                    let distance = Geodesy.distance(query.center, place)
                    let id = RoomID(item.id)
                    guard distance <= query.radiusMetres, best.wouldKeep(distance, id) else { continue }
                    let bearing = Geodesy.bearing(from: query.center, to: place)
                    guard query.admits(place, distance: distance, bearing: bearing) else { continue }
                    best.offer(distance: distance, bearing: bearing, id: id, slot: slot)
                }
            }
        }
        return best.ranked.map {
            NearbyRoom(room: info($0.slot), distanceMetres: $0.distance, bearingDegrees: $0.bearing)
        }
    }

    /// The cells a nearby query looks at (its cost, as `cellsLookedAt(by:)` is a region query's).
    package func cellsLookedAt(by query: NearbyQuery) -> Int {
        query.boxes.reduce(0) { $0 + places.cellsLookedAt($1) }
    }
}

/// The best `limit` rooms of a nearby query so far, nearest first: a sorted
/// array, which at most 100 entries keeps cheaper than a heap.
private struct NearestRooms {
    struct Found {
        var distance: Double
        var bearing: Double
        var id: RoomID
        var slot: Int32
    }

    let limit: Int
    private(set) var ranked: [Found] = []

    init(limit: Int) {
        self.limit = limit
        ranked.reserveCapacity(limit + 1)
    }

    func wouldKeep(_ distance: Double, _ id: RoomID) -> Bool {
        guard ranked.count == limit, let worst = ranked.last else { return true }
        return (distance, id) < (worst.distance, worst.id)
    }

    mutating func offer(distance: Double, bearing: Double, id: RoomID, slot: Int32) {
        guard wouldKeep(distance, id) else { return }
        let at = ranked.firstIndex { (distance, id) < ($0.distance, $0.id) } ?? ranked.count
        ranked.insert(Found(distance: distance, bearing: bearing, id: id, slot: slot), at: at)
        if ranked.count > limit { ranked.removeLast() }
    }
}

/// The k-way merge of a query's cells, newest first: a max-heap of each cell's
/// next room inside the box. Cost: the cells, plus the rooms taken, plus those of
/// edge cells passed over for lying outside the box.
private struct CellMerge {
    private struct Source {
        let entries: [RoomGridLevel.Entry]
        let cell: Range<Int>
        let whole: Bool
    }

    private struct Head {
        var source: Int
        var position: Int
        var visitedAtMs: Int64
        var id: Int64

        func precedes(_ other: Head) -> Bool { (visitedAtMs, id) < (other.visitedAtMs, other.id) }
    }

    let box: MercatorBox
    let records: [RoomRecord]
    private var sources: [Source] = []
    private var total = 0

    init(box: MercatorBox, records: [RoomRecord]) {
        self.box = box
        self.records = records
    }

    mutating func add(_ entries: [RoomGridLevel.Entry], _ cell: Range<Int>, whole: Bool) {
        sources.append(Source(entries: entries, cell: cell, whole: whole))
        total += cell.count
    }

    /// The next position at or below `position` (within the cell) whose room lies in the box.
    private func match(_ source: Source, from position: Int) -> Int? {
        if source.whole { return position >= source.cell.lowerBound ? position : nil }
        var at = position
        while at >= source.cell.lowerBound {
            let item = records[Int(source.entries[at].slot)]
            if item.x >= box.minX && item.x <= box.maxX && item.y >= box.minY && item.y <= box.maxY { return at }
            at -= 1
        }
        return nil
    }

    private func head(_ index: Int, _ position: Int) -> Head {
        let item = records[Int(sources[index].entries[position].slot)]
        return Head(source: index, position: position, visitedAtMs: item.visitedAtMs, id: item.id)
    }

    /// The `cap` newest rooms in the box (all of them when fewer), by id and slot.
    func takeMostRecent(_ cap: Int) -> [(id: Int64, slot: Int32)] {
        var taken: [(id: Int64, slot: Int32)] = []
        taken.reserveCapacity(min(cap, total))
        if total <= cap {
            // Everything that matches fits: no order needed.
            for source in sources {
                var at = source.cell.upperBound - 1
                while let found = match(source, from: at) {
                    let slot = source.entries[found].slot
                    taken.append((records[Int(slot)].id, slot))
                    at = found - 1
                }
            }
            return taken
        }
        var heap: [Head] = []
        heap.reserveCapacity(sources.count)
        for (index, source) in sources.enumerated() {
            if let found = match(source, from: source.cell.upperBound - 1) { heap.append(head(index, found)) }
        }
        heapify(&heap)
        while taken.count < cap, let top = heap.first {
            let source = sources[top.source]
            taken.append((top.id, source.entries[top.position].slot))
            if let next = match(source, from: top.position - 1) {
                heap[0] = head(top.source, next)
            } else {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
            }
            if !heap.isEmpty { siftDown(&heap, from: 0) }
        }
        return taken
    }

    private func heapify(_ heap: inout [Head]) {
        guard heap.count > 1 else { return }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(&heap, from: index) }
    }

    /// Max-heap on (last visit, id).
    private func siftDown(_ heap: inout [Head], from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var largest = parent
            if left < heap.count && heap[largest].precedes(heap[left]) { largest = left }
            if right < heap.count && heap[largest].precedes(heap[right]) { largest = right }
            if largest == parent { return }
            heap.swapAt(parent, largest)
            parent = largest
        }
    }
}

/// One room as `RoomIndex` holds it: 40 bytes in one array, slot by slot, with
/// everything a query reads of a room in one cache line (its place and last
/// visit to pick it, its id to order it, its zoom and topic to answer it). The
/// topic's bytes are in the index's `TopicBuffer`.
struct RoomRecord {
    /// A slot that holds no room (free for the next one) has this zoom.
    static let free: UInt8 = .max

    var id: Int64
    var x: Double
    var y: Double
    var visitedAtMs: Int64
    var topicOffset: UInt32
    var topicLength: UInt16
    var zoom: UInt8

    var isFree: Bool { zoom == Self.free }

    /// Stored from a `RoomInfo`'s, so always valid.
    var position: MercatorPoint { MercatorPoint(x: x, y: y)! }
    var zoomLevel: ZoomLevel { ZoomLevel(Int(zoom))! }

    /// Whether this room is taken after `other` (later visit, or the higher id at the same time).
    func isNewer(thanVisit visitedAtMs: Int64, id: Int64) -> Bool { (self.visitedAtMs, self.id) > (visitedAtMs, id) }
}
