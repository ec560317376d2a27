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
/// to four at the shallowest. A level's empty cells cost nothing (a dictionary
/// holds the others); a box covering more cells than the level has non-empty
/// ones looks at those instead.
package struct RoomIndex {
    /// A room as a cell holds it: enough to order it and to test it against a box.
    package struct Ranked {
        package var visitedAtMs: Int64
        package var id: RoomID
        package var x: Double
        package var y: Double

        package func precedes(_ other: Ranked) -> Bool { (visitedAtMs, id) < (other.visitedAtMs, other.id) }
    }

    private struct Entry {
        var room: RoomInfo
        var visitedAtMs: Int64
    }

    private struct Level {
        let bits: Int
        /// Non-empty cells, each ascending by (last visit, id).
        var cells: [UInt64: [Ranked]] = [:]

        var side: Int { 1 << bits }

        func cell(_ coordinate: Double) -> Int { min(Int(coordinate * Double(side)), side - 1) }

        func key(of point: MercatorPoint) -> UInt64 { Self.key(cell(point.x), cell(point.y)) }

        static func key(_ cx: Int, _ cy: Int) -> UInt64 { UInt64(cx) << 32 | UInt64(cy) }
    }

    /// Cell side at zoom `z`: 2^-(z+2) of the world, at most 2^-16 (~600 m at the equator).
    package static func cellBits(zoom: Int) -> Int { min(zoom + 2, 16) }

    private var entries: [RoomID: Entry] = [:]
    private var levels: [Level] = ZoomLevel.range.map { Level(bits: RoomIndex.cellBits(zoom: $0)) }
    /// Every room by place alone, for nearby search: a radius names no zoom, and
    /// the levels' deep grids would make a radius of tens of kilometres look at
    /// tens of thousands of mostly empty cells per level (27 ms p99 over a
    /// million rooms for 50 km, docs/benchmarks.md). Cells are 2^-12 of the
    /// world (about 10 km at the equator): a few for a town's radius, ~300 for 50 km.
    private var places = Level(bits: RoomIndex.placeBits)
    package static let placeBits = 12

    package init() {}

    package var count: Int { entries.count }

    package func room(_ id: RoomID) -> RoomInfo? { entries[id]?.room }

    package func visitedAtMs(_ id: RoomID) -> Int64? { entries[id]?.visitedAtMs }

    /// Adds a room, or moves a known one's last visit forward.
    package mutating func upsert(_ room: RoomInfo, visitedAtMs: Int64) {
        guard entries[room.id] == nil else { return visit(room.id, atMs: visitedAtMs) }
        entries[room.id] = Entry(room: room, visitedAtMs: visitedAtMs)
        insert(ranked(room, visitedAtMs), zoom: room.zoom.value)
        places.cells[places.key(of: room.position), default: []].append(ranked(room, 0))
    }

    /// A visit moves the room forward in its cell; an older one changes nothing.
    package mutating func visit(_ id: RoomID, atMs: Int64) {
        guard let entry = entries[id], atMs > entry.visitedAtMs else { return }
        delete(ranked(entry.room, entry.visitedAtMs), zoom: entry.room.zoom.value)
        entries[id]!.visitedAtMs = atMs
        insert(ranked(entry.room, atMs), zoom: entry.room.zoom.value)
    }

    package mutating func remove(_ id: RoomID) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        delete(ranked(entry.room, entry.visitedAtMs), zoom: entry.room.zoom.value)
        let key = places.key(of: entry.room.position)
        if var cell = places.cells.removeValue(forKey: key) {
            cell.removeAll { $0.id == id }
            if !cell.isEmpty { places.cells[key] = cell }
        }
    }

    /// The rooms inside the box (edges included) and zoom range, ordered by id;
    /// at most `cap`, the most recently visited ones when more match (ties: the
    /// higher id), as `PostgresRoomStore.region` answers.
    package func rooms(in query: RegionQuery) -> [RoomInfo] {
        guard query.cap > 0 else { return [] }
        var sources = CellMerge(box: query.box)
        for z in query.zooms.clamped(to: ZoomLevel.range) {
            collectCells(of: levels[z], in: query.box, into: &sources)
        }
        return sources.takeMostRecent(query.cap)
            .compactMap { entries[$0]?.room }
            .sorted { $0.id < $1.id }
    }

    /// How many cells `rooms(in:)` looks at for this query: its cost, whatever
    /// it answers (a phone's screen covers at most a few thousand; the whole
    /// world at every zoom covers every non-empty cell there is).
    package func cellsLookedAt(by query: RegionQuery) -> Int {
        var total = 0
        for z in query.zooms.clamped(to: ZoomLevel.range) {
            let level = levels[z]
            guard !level.cells.isEmpty else { continue }
            let width = level.cell(query.box.maxX) - level.cell(query.box.minX) + 1
            let height = level.cell(query.box.maxY) - level.cell(query.box.minY) + 1
            total += min(width * height, level.cells.count)
        }
        return total
    }

    private func collectCells(of level: Level, in box: MercatorBox, into sources: inout CellMerge) {
        forEachCell(of: level, in: box) { cell, whole in sources.add(cell, whole: whole) }
    }

    /// Every non-empty cell of the level that the box touches, and whether it
    /// lies wholly inside the box.
    private func forEachCell(of level: Level, in box: MercatorBox, _ body: ([Ranked], Bool) -> Void) {
        guard !level.cells.isEmpty else { return }
        let x0 = level.cell(box.minX)
        let x1 = level.cell(box.maxX)
        let y0 = level.cell(box.minY)
        let y1 = level.cell(box.maxY)
        let side = Double(level.side)
        // A cell wholly inside the box needs no test per room (exact: the side is a power of two).
        func isInside(_ cx: Int, _ cy: Int) -> Bool {
            Double(cx) / side >= box.minX && Double(cx + 1) / side <= box.maxX
                && Double(cy) / side >= box.minY && Double(cy + 1) / side <= box.maxY
        }
        let covered = (x1 - x0 + 1) * (y1 - y0 + 1)
        if covered <= level.cells.count {
            for cx in x0...x1 {
                for cy in y0...y1 {
                    if let cell = level.cells[Level.key(cx, cy)] { body(cell, isInside(cx, cy)) }
                }
            }
        } else {
            for (key, cell) in level.cells {
                let cx = Int(key >> 32)
                let cy = Int(key & 0xFFFF_FFFF)
                if (x0...x1).contains(cx) && (y0...y1).contains(cy) { body(cell, isInside(cx, cy)) }
            }
        }
    }

    /// The rooms nearest the query's point that it admits, nearest first (ties:
    /// the lower id); at most `limit`. Looks at the place cells of the boxes
    /// around the radius only (`NearbyQuery.boxes`), and keeps the best `limit` as it goes.
    package func nearest(_ query: NearbyQuery) -> [NearbyRoom] {
        var best = NearestRooms(limit: query.limit)
        for box in query.boxes {
            forEachCell(of: places, in: box) { cell, whole in
                for item in cell {
                    if !whole && !(item.x >= box.minX && item.x <= box.maxX && item.y >= box.minY && item.y <= box.maxY)
                    {
                        continue
                    }
                    guard let room = entries[item.id]?.room, query.zooms.contains(room.zoom.value) else { continue }
                    let place = GeoPoint(room.position)
                    let distance = Geodesy.distance(query.center, place)
                    guard distance <= query.radiusMetres, best.wouldKeep(distance, item.id) else { continue }
                    let bearing = Geodesy.bearing(from: query.center, to: place)
                    guard query.admits(place, distance: distance, bearing: bearing) else { continue }
                    best.offer(distance: distance, bearing: bearing, id: item.id)
                }
            }
        }
        return best.ranked.compactMap { found in
            entries[found.id].map {
                NearbyRoom(room: $0.room, distanceMetres: found.distance, bearingDegrees: found.bearing)
            }
        }
    }

    /// The cells a nearby query looks at (its cost, as `cellsLookedAt(by:)` is a region query's).
    package func cellsLookedAt(by query: NearbyQuery) -> Int {
        query.boxes.reduce(0) { total, box in
            let width = places.cell(box.maxX) - places.cell(box.minX) + 1
            let height = places.cell(box.maxY) - places.cell(box.minY) + 1
            return total + min(width * height, places.cells.count)
        }
    }

    private func ranked(_ room: RoomInfo, _ visitedAtMs: Int64) -> Ranked {
        Ranked(visitedAtMs: visitedAtMs, id: room.id, x: room.position.x, y: room.position.y)
    }

    private mutating func insert(_ item: Ranked, zoom: Int) {
        let level = levels[zoom]
        let key = Level.key(level.cell(item.x), level.cell(item.y))
        levels[zoom].cells[key, default: []].insertInOrder(item)
    }

    private mutating func delete(_ item: Ranked, zoom: Int) {
        let level = levels[zoom]
        let key = Level.key(level.cell(item.x), level.cell(item.y))
        guard var cell = levels[zoom].cells.removeValue(forKey: key) else { return }
        cell.removeInOrder(item)
        if !cell.isEmpty { levels[zoom].cells[key] = cell }
    }
}

extension Array where Element == RoomIndex.Ranked {
    /// The first index whose element does not precede `item`.
    fileprivate func insertionPoint(_ item: Element) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid].precedes(item) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// A visit is almost always the newest: the append is the common case.
    fileprivate mutating func insertInOrder(_ item: Element) {
        if let last, !item.precedes(last) { append(item) } else { insert(item, at: insertionPoint(item)) }
    }

    fileprivate mutating func removeInOrder(_ item: Element) {
        let at = insertionPoint(item)
        if at < count && self[at].id == item.id { remove(at: at) }
    }
}

/// The best `limit` rooms of a nearby query so far, nearest first: a sorted
/// array, which at most 100 entries keeps cheaper than a heap.
private struct NearestRooms {
    struct Found {
        var distance: Double
        var bearing: Double
        var id: RoomID
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

    mutating func offer(distance: Double, bearing: Double, id: RoomID) {
        guard wouldKeep(distance, id) else { return }
        let at = ranked.firstIndex { (distance, id) < ($0.distance, $0.id) } ?? ranked.count
        ranked.insert(Found(distance: distance, bearing: bearing, id: id), at: at)
        if ranked.count > limit { ranked.removeLast() }
    }
}

/// The k-way merge of a query's cells, newest first: a max-heap of each cell's
/// next room inside the box. Cost: the cells, plus the rooms taken, plus those of
/// edge cells passed over for lying outside the box.
private struct CellMerge {
    private struct Source {
        let cell: [RoomIndex.Ranked]
        let whole: Bool
    }

    private struct Head {
        var source: Int
        var position: Int
        var item: RoomIndex.Ranked
    }

    let box: MercatorBox
    private var sources: [Source] = []
    private var total = 0

    init(box: MercatorBox) { self.box = box }

    mutating func add(_ cell: [RoomIndex.Ranked], whole: Bool) {
        sources.append(Source(cell: cell, whole: whole))
        total += cell.count
    }

    /// The next position at or below `position` whose room lies in the box.
    private func match(_ source: Source, from position: Int) -> Int? {
        var at = position
        while at >= 0 {
            let item = source.cell[at]
            if source.whole || (item.x >= box.minX && item.x <= box.maxX && item.y >= box.minY && item.y <= box.maxY) {
                return at
            }
            at -= 1
        }
        return nil
    }

    func takeMostRecent(_ cap: Int) -> [RoomID] {
        var taken: [RoomID] = []
        taken.reserveCapacity(min(cap, total))
        if total <= cap {
            // Everything that matches fits: no order needed.
            for source in sources {
                var at = source.cell.count - 1
                while let found = match(source, from: at) {
                    taken.append(source.cell[found].id)
                    at = found - 1
                }
            }
            return taken
        }
        var heap: [Head] = []
        heap.reserveCapacity(sources.count)
        for (index, source) in sources.enumerated() {
            if let found = match(source, from: source.cell.count - 1) {
                heap.append(Head(source: index, position: found, item: source.cell[found]))
            }
        }
        heapify(&heap)
        while taken.count < cap, let top = heap.first {
            taken.append(top.item.id)
            let source = sources[top.source]
            if top.position > 0, let next = match(source, from: top.position - 1) {
                heap[0] = Head(source: top.source, position: next, item: source.cell[next])
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
            if left < heap.count && heap[largest].item.precedes(heap[left].item) { largest = left }
            if right < heap.count && heap[largest].item.precedes(heap[right].item) { largest = right }
            if largest == parent { return }
            heap.swapAt(parent, largest)
            parent = largest
        }
    }
}
