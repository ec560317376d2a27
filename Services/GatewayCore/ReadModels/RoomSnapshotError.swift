/// Why a room snapshot was not read.
package enum RoomSnapshotError: Error, Equatable {
    /// Not a room snapshot of this format's version.
    case notASnapshot
    /// Cut short or changed after it was written.
    case damaged
}
