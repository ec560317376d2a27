/// Room id → slot of `RoomIndex`'s records: linear probing over a power-of-two
/// table of 32-bit slots, 4 bytes a bucket at most 70 % full (a `[RoomID: Int]`
/// dictionary spends 16 a bucket). The table holds no keys: a bucket's id is its
/// record's, read from the records the caller passes. A removal shifts the rest
/// of its probe run back instead of leaving a tombstone, so probes stay as short
/// after a million removals as before them.
struct RoomSlotMap {
    private static let empty: Int32 = -1

    private var buckets: [Int32] = []
    /// 64 − log2(buckets): the top bits of the hash pick the bucket.
    private var shift: UInt64 = 64
    private(set) var count = 0

    var capacity: Int { buckets.count }

    /// Every room moved to the slot `moved[old slot]`: a bucket depends on the
    /// id alone, so each keeps its place (and no table is built anew).
    mutating func renumber(_ moved: [Int32]) {
        for at in buckets.indices where buckets[at] != Self.empty { buckets[at] = moved[Int(buckets[at])] }
    }

    /// Fibonacci hashing: sequential ids (one database sequence) spread over the table.
    private func home(_ id: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    private func bucket(of id: Int64, in records: [RoomRecord]) -> Int? {
        guard count > 0 else { return nil }
        let mask = buckets.count - 1
        var at = home(id)
        while true {
            let slot = buckets[at]
            if slot == Self.empty { return nil }
            if records[Int(slot)].id == id { return at }
            at = (at + 1) & mask
        }
    }

    func slot(of id: Int64, in records: [RoomRecord]) -> Int32? {
        bucket(of: id, in: records).map { buckets[$0] }
    }

    /// Adds `slot`, whose record holds an id the map does not hold yet.
    mutating func insert(_ slot: Int32, in records: [RoomRecord]) {
        if (count + 1) * 10 > buckets.count * 7 { grow(records) }
        place(slot, id: records[Int(slot)].id)
        count += 1
    }

    private mutating func place(_ slot: Int32, id: Int64) {
        let mask = buckets.count - 1
        var at = home(id)
        while buckets[at] != Self.empty { at = (at + 1) & mask }
        buckets[at] = slot
    }

    /// Removes the id (its record must still hold it); its slot, if it was there.
    @discardableResult
    mutating func remove(_ id: Int64, in records: [RoomRecord]) -> Int32? {
        guard var hole = bucket(of: id, in: records) else { return nil }
        let removed = buckets[hole]
        let mask = buckets.count - 1
        var next = (hole + 1) & mask
        // Backward shift: an entry later in the run moves into the hole when the
        // hole lies on its probe path (between its home bucket and where it is).
        while buckets[next] != Self.empty {
            let home = home(records[Int(buckets[next])].id)
            if (next - home) & mask >= (next - hole) & mask {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = Self.empty
        count -= 1
        return removed
    }

    private mutating func grow(_ records: [RoomRecord]) {
        let old = buckets
        let size = max(16, old.count * 2)
        buckets = [Int32](repeating: Self.empty, count: size)
        shift = UInt64(64 - size.trailingZeroBitCount)
        for slot in old where slot != Self.empty { place(slot, id: records[Int(slot)].id) }
    }
}
