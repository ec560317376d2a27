import Dispatch
import Foundation
import GeoChatDomain
import Logging

/// Where a gateway keeps its room snapshot (`GEOCHAT_ROOM_SNAPSHOT_FILE`):
/// written every interval and at shutdown, read at start. A snapshot is a
/// hint, never the truth: the start-up catch-up checks it against the rooms
/// service, and a missing, old, torn or foreign file only costs the full load.
package struct RoomSnapshotFile: Sendable {
    package let path: String

    package init(path: String) { self.path = path }

    /// The snapshot, checked whole; nil when there is none or it cannot be used (logged).
    package func read(logger: Logger) async -> RoomSnapshot.Contents? {
        let path = path
        let outcome: Result<RoomSnapshot.Contents?, any Error> = await onFileThread {
            Result {
                guard let bytes = try Self.readAll(path) else { return nil }
                return try RoomSnapshot.Contents(bytes)
            }
        }
        switch outcome {
        case .success(let contents?):
            return contents
        case .success(nil):
            logger.info("no room snapshot yet; loading every room", metadata: ["file": "\(path)"])
        case .failure(let error):
            logger.warning(
                "room snapshot not used; loading every room", metadata: ["file": "\(path)", "error": "\(error)"])
        }
        return nil
    }

    /// Writes the map's index next to `path` and renames it over, so a reader
    /// sees the old snapshot or the new one, never half of one. Nothing when
    /// the index is not loaded yet.
    @discardableResult
    package func write(_ map: RoomMap, logger: Logger) async -> Bool {
        let path = path
        let started = ContinuousClock.now
        let outcome: Result<(rooms: Int, bytes: Int)?, any Error> = await onFileThread {
            Result {
                try Self.writeAtomically(path) { emit in try map.writeSnapshot(takenAtMs: WallClock.nowMs(), emit) }
            }
        }
        switch outcome {
        case .success(let written?):
            logger.info(
                "room snapshot written",
                metadata: [
                    "file": "\(path)", "rooms": "\(written.rooms)", "bytes": "\(written.bytes)",
                    "ms": "\(Self.milliseconds(ContinuousClock.now - started))",
                ])
            return true
        case .success(nil):
            return false
        case .failure(let error):
            logger.warning("room snapshot not written", metadata: ["file": "\(path)", "error": "\(error)"])
            return false
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// Writes every `interval` until cancelled, then once more (a graceful
    /// stop's snapshot is the freshest a restart can have).
    package func keep(_ map: RoomMap, every interval: Duration, logger: Logger) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            await write(map, logger: logger)
        }
    }

    // MARK: - The file, on a thread of its own (a million rooms are ~50 MB to write or read)

    private static func readAll(_ path: String) throws -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw RoomSnapshotFileError(operation: "open", path: path, errno: errno)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw RoomSnapshotFileError(operation: "stat", path: path, errno: errno)
        }
        let size = Int(status.st_size)
        return try [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = 0
            while count < size {
                let got = Foundation.read(descriptor, buffer.baseAddress! + count, size - count)
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { throw RoomSnapshotFileError(operation: "read", path: path, errno: errno) }
                count += got
            }
        }
    }

    /// Writes to `path.tmp`, syncs, renames over `path`; the rooms and bytes
    /// written, nil (and nothing left behind) when `body` writes nothing.
    private static func writeAtomically(
        _ path: String, _ body: (_ emit: ([UInt8]) throws -> Void) throws -> Int?
    ) throws -> (rooms: Int, bytes: Int)? {
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw RoomSnapshotFileError(operation: "open", path: temporary, errno: errno) }
        var written = 0
        var closed = false
        defer {
            if !closed {
                close(descriptor)
                unlink(temporary)
            }
        }
        let rooms = try body { bytes in
            try bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let put = Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if put < 0 && errno == EINTR { continue }
                    guard put > 0 else {
                        throw RoomSnapshotFileError(operation: "write", path: temporary, errno: errno)
                    }
                    offset += put
                }
            }
            written += bytes.count
        }
        guard let rooms else { return nil }
        guard fsync(descriptor) == 0 else {
            throw RoomSnapshotFileError(operation: "fsync", path: temporary, errno: errno)
        }
        closed = true
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw RoomSnapshotFileError(operation: "rename", path: path, errno: errno)
        }
        return (rooms, written)
    }

    /// Blocking file work off the cooperative threads, which serve every request.
    private func onFileThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: body()) }
        }
    }
}

/// A system call on the snapshot file failed.
package struct RoomSnapshotFileError: Error, CustomStringConvertible {
    let operation: String
    let path: String
    let errno: Int32

    package var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
}
