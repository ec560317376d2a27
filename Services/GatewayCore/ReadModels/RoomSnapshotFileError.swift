import Foundation

/// A system call on the snapshot file failed.
package struct RoomSnapshotFileError: Error, CustomStringConvertible {
    let operation: String
    let path: String
    let errno: Int32

    package var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
}
