import GeoChatDomain

/// One grid of `RoomIndex` (a zoom level's, or the places grid): each of its
/// rooms as (cell, slot), 8 bytes, in one array sorted by cell and, within a
/// cell, in the order a query takes them: (last visit, id) for a zoom level, id
/// for places. A cell is a run of the array, and so is a column of cells (one x,
/// the y's of a box): a box costs one binary search per column.
///
/// Why not a dictionary of per-cell arrays (as before): at the deep levels
/// almost every room is alone in its cell, and a cell of its own cost ~100
/// bytes (a dictionary entry, a heap array of one 32-byte entry); here a room
/// costs 8 bytes a grid. The price: adding or removing one room moves the
/// array's tail (a few MB at most, ~0.1 ms); pages of the start-up load and
/// bulk removals are merged or filtered in one pass instead.
struct RoomGridLevel {
    struct Entry {
        /// cx << 16 | cy: cells are at most 2^16 a side.
        var cell: UInt32
        var slot: Int32
    }

    let bits: Int
    /// Within a cell: by (last visit, id) when true, by id when false.
    let byVisit: Bool
    private(set) var entries: [Entry] = []
    /// Non-empty cells: what a query covering every cell looks at.
    private(set) var cellCount = 0

    init(bits: Int, byVisit: Bool) {
        precondition(bits <= 16, "a cell key holds 16 bits a coordinate")
        self.bits = bits
        self.byVisit = byVisit
    }

    var side: Int { 1 << bits }

    func cell(_ coordinate: Double) -> Int { min(Int(coordinate * Double(side)), side - 1) }

    static func key(_ cx: Int, _ cy: Int) -> UInt32 { UInt32(cx) << 16 | UInt32(cy) }

    func key(of record: RoomRecord) -> UInt32 { Self.key(cell(record.x), cell(record.y)) }

    // MARK: Order

    /// Whether `entry` sorts before a room of `cell` with this visit and id.
    private func precedes(
        _ entry: Entry, _ cell: UInt32, _ visitedAtMs: Int64, _ id: Int64, _ records: [RoomRecord]
    ) -> Bool {
        if entry.cell != cell { return entry.cell < cell }
        let record = records[Int(entry.slot)]
        return byVisit ? (record.visitedAtMs, record.id) < (visitedAtMs, id) : record.id < id
    }

    private func precedes(_ a: Entry, _ b: Entry, _ records: [RoomRecord]) -> Bool {
        let record = records[Int(b.slot)]
        return precedes(a, b.cell, record.visitedAtMs, record.id, records)
    }

    /// The first position whose entry does not sort before (cell, visit, id).
    private func position(_ cell: UInt32, _ visitedAtMs: Int64, _ id: Int64, _ records: [RoomRecord]) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if precedes(entries[mid], cell, visitedAtMs, id, records) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first position at or after `from` whose cell is not below `cell`.
    private func firstPosition(of cell: UInt32, from: Int = 0) -> Int {
        var low = from
        var high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].cell < cell { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The end of the cell run starting at `start`: galloping, as most cells hold one room or a few.
    private func endOfCell(from start: Int) -> Int {
        let cell = entries[start].cell
        var step = 1
        while start + step < entries.count && entries[start + step].cell == cell { step *= 2 }
        // Between the last position seen in the cell and the first seen past it (or the end).
        var low = start + step / 2 + 1
        var high = min(start + step, entries.count)
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].cell == cell { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private func isAlone(at position: Int) -> Bool {
        let cell = entries[position].cell
        return (position == 0 || entries[position - 1].cell != cell)
            && (position + 1 == entries.count || entries[position + 1].cell != cell)
    }

    // MARK: Changes

    /// Every room moved to the slot `moved[old slot]`: the order stays, as no room's place or visit changed.
    mutating func renumber(_ moved: [Int32]) {
        for at in entries.indices { entries[at].slot = moved[Int(entries[at].slot)] }
    }

    /// Adds the room of `slot` (its record as it will be indexed).
    mutating func insert(_ slot: Int32, _ records: [RoomRecord]) {
        let record = records[Int(slot)]
        let cell = key(of: record)
        let at = position(cell, record.visitedAtMs, record.id, records)
        entries.insert(Entry(cell: cell, slot: slot), at: at)
        if isAlone(at: at) { cellCount += 1 }
    }

    /// Adds many rooms in one pass: sorted among themselves, then merged from the back.
    mutating func insert(contentsOf slots: [Int32], _ records: [RoomRecord]) {
        guard slots.count > 1 else {
            if let slot = slots.first { insert(slot, records) }
            return
        }
        let added = slots.map { Entry(cell: key(of: records[Int($0)]), slot: $0) }
            .sorted { precedes($0, $1, records) }
        var old = entries.count - 1
        var new = added.count - 1
        entries.append(contentsOf: added)
        var at = entries.count - 1
        while new >= 0 {
            if old >= 0 && precedes(added[new], entries[old], records) {
                entries[at] = entries[old]
                old -= 1
            } else {
                entries[at] = added[new]
                new -= 1
            }
            at -= 1
        }
        countCells()
    }

    /// Removes the room of `slot` (its record still as it was indexed).
    mutating func remove(_ slot: Int32, _ records: [RoomRecord]) {
        let record = records[Int(slot)]
        let at = position(key(of: record), record.visitedAtMs, record.id, records)
        guard at < entries.count, entries[at].slot == slot else { return }
        if isAlone(at: at) { cellCount -= 1 }
        entries.remove(at: at)
    }

    /// Removes the rooms of `slots` (their records still as indexed): each found
    /// by binary search, then the array closed up in one pass from the first
    /// (no record is read per entry kept: an expiry run's batches stay cheap).
    mutating func remove(contentsOf slots: [Int32], _ records: [RoomRecord]) {
        var positions: [Int] = []
        positions.reserveCapacity(slots.count)
        for slot in slots {
            let record = records[Int(slot)]
            let at = position(key(of: record), record.visitedAtMs, record.id, records)
            if at < entries.count && entries[at].slot == slot { positions.append(at) }
        }
        guard !positions.isEmpty else { return }
        positions.sort()
        // A room named twice in the batch is removed once.
        var unique = 0
        for at in positions where unique == 0 || at != positions[unique - 1] {
            positions[unique] = at
            unique += 1
        }
        positions.removeLast(positions.count - unique)
        // A cell is emptied when the positions removed from it are its whole run.
        var first = 0
        while first < positions.count {
            let cell = entries[positions[first]].cell
            var last = first
            while last + 1 < positions.count && entries[positions[last + 1]].cell == cell { last += 1 }
            let start = positions[first]
            let end = positions[last]
            if end - start == last - first && (start == 0 || entries[start - 1].cell != cell)
                && (end + 1 == entries.count || entries[end + 1].cell != cell)
            {
                cellCount -= 1
            }
            first = last + 1
        }
        // The kept stretches between removed positions, each moved down at once.
        entries.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var kept = positions[0]
            for (index, at) in positions.enumerated() {
                let next = index + 1 < positions.count ? positions[index + 1] : buffer.count
                let count = next - at - 1
                if count > 0 {
                    UnsafeMutableRawPointer(base + kept).copyMemory(
                        from: base + at + 1, byteCount: count * MemoryLayout<Entry>.stride)
                    kept += count
                }
            }
        }
        entries.removeLast(positions.count)
    }

    /// A later visit of the room of `slot` (its record still at the earlier one):
    /// it moves towards the end of its cell, past the rooms visited between.
    mutating func moveForward(_ slot: Int32, toVisit visitedAtMs: Int64, _ records: [RoomRecord]) {
        let record = records[Int(slot)]
        let cell = key(of: record)
        let from = position(cell, record.visitedAtMs, record.id, records)
        guard from < entries.count, entries[from].slot == slot else { return }
        // The entry at `from` sorts before the target, so the target lies after it.
        let to = position(cell, visitedAtMs, record.id, records) - 1
        var at = from
        while at < to {
            entries[at] = entries[at + 1]
            at += 1
        }
        entries[to] = Entry(cell: cell, slot: slot)
    }

    private mutating func countCells() {
        var cells = 0
        var last: UInt32? = nil
        for entry in entries where entry.cell != last {
            cells += 1
            last = entry.cell
        }
        cellCount = cells
    }

    // MARK: Queries

    /// The cells a query of this box looks at: those it covers, at most the non-empty ones.
    func cellsLookedAt(_ box: MercatorBox) -> Int {
        guard cellCount > 0 else { return 0 }
        let width = cell(box.maxX) - cell(box.minX) + 1
        let height = cell(box.maxY) - cell(box.minY) + 1
        return min(width * height, cellCount)
    }

    /// Every non-empty cell the box touches, as a range of `entries`, and whether
    /// it lies wholly inside the box.
    func forEachCell(in box: MercatorBox, _ body: (Range<Int>, Bool) -> Void) {
        guard !entries.isEmpty else { return }
        let x0 = cell(box.minX)
        let x1 = cell(box.maxX)
        let y0 = cell(box.minY)
        let y1 = cell(box.maxY)
        let cells = Double(side)
        // A cell wholly inside the box needs no test per room (exact: the side is a power of two).
        func isInside(_ cell: UInt32) -> Bool {
            let cx = Int(cell >> 16)
            let cy = Int(cell & 0xFFFF)
            return Double(cx) / cells >= box.minX && Double(cx + 1) / cells <= box.maxX
                && Double(cy) / cells >= box.minY && Double(cy + 1) / cells <= box.maxY
        }
        let columns = x1 - x0 + 1
        // A binary search a column, or one pass over every cell when that is cheaper.
        if columns * (entries.count.bitWidth - entries.count.leadingZeroBitCount) < entries.count {
            var at = 0
            for cx in x0...x1 {
                let last = Self.key(cx, y1)
                at = firstPosition(of: Self.key(cx, y0), from: at)
                while at < entries.count && entries[at].cell <= last {
                    let end = endOfCell(from: at)
                    body(at..<end, isInside(entries[at].cell))
                    at = end
                }
            }
        } else {
            var at = 0
            while at < entries.count {
                let cell = entries[at].cell
                let end = endOfCell(from: at)
                let cx = Int(cell >> 16)
                let cy = Int(cell & 0xFFFF)
                if cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1 { body(at..<end, isInside(cell)) }
                at = end
            }
        }
    }
}
