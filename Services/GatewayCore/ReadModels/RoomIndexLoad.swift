/// How a gateway's region index was loaded at start.
package enum RoomIndexLoad: Equatable, Sendable {
    /// Page by page from the rooms service: no usable snapshot, or one the rooms service's tally refuted.
    case everyRoom
    /// From the snapshot (`rooms`, taken `ageMs` before), then what changed since.
    case snapshot(rooms: Int, ageMs: Int64)
}
