import GeoChatDomain

/// A gateway's region index as bytes: what `RoomSnapshotFile` writes while
/// the gateway runs and reads back at start, so the gateway asks the rooms
/// service only for what changed since (`RoomMap.loadAll`; docs/architecture.md,
/// "The region index").
///
/// Little-endian. A 16-byte magic naming the format and its version; when the
/// snapshot began (ms since 1970); one record a room: id, x, y (IEEE bits),
/// last visit (ms), zoom (1 byte), the topic's UTF-8 length (2 bytes) and
/// bytes; then an end record (id 0), the number of rooms and an FNV-1a
/// checksum of every byte before it. A file that fails any check is not read
/// at all: a torn or foreign file costs a full load, never a wrong index.
package enum RoomSnapshot {
    static let magic = Array("geochat rooms 1\n".utf8)
    /// id, x, y, visit, zoom, topic length.
    static let recordHead = 8 + 8 + 8 + 8 + 1 + 2
    /// The end record's id, the count, the checksum.
    static let trailer = 8 + 8 + 8

    /// Writes a snapshot chunk by chunk (a million rooms are ~50 MB; no chunk holds them all).
    package struct Writer {
        private var pending: [UInt8] = []
        private var checksum = FNV1a()
        package private(set) var rooms = 0

        package init(takenAtMs: Int64) {
            pending = RoomSnapshot.magic
            pending.appendLittleEndian(UInt64(bitPattern: takenAtMs))
        }

        mutating func append(_ record: RoomRecord, topic: UnsafeBufferPointer<UInt8>) {
            pending.appendLittleEndian(UInt64(bitPattern: record.id))
            pending.appendLittleEndian(record.x.bitPattern)
            pending.appendLittleEndian(record.y.bitPattern)
            pending.appendLittleEndian(UInt64(bitPattern: record.visitedAtMs))
            pending.append(record.zoom)
            pending.appendLittleEndian(UInt16(topic.count))
            pending.append(contentsOf: topic)
            rooms += 1
        }

        /// Bytes written since the last call (counted into the checksum).
        package mutating func takeBytes() -> [UInt8] {
            checksum.add(pending)
            defer { pending = [] }
            return pending
        }

        /// The last bytes: what is pending, then the trailer.
        package mutating func finish() -> [UInt8] {
            pending.appendLittleEndian(UInt64(0))
            pending.appendLittleEndian(UInt64(rooms))
            var last = takeBytes()
            last.appendLittleEndian(checksum.value)
            return last
        }
    }

    /// A snapshot read back and checked whole: every record well formed, the
    /// count and the checksum right.
    package struct Contents: Sendable {
        package let takenAtMs: Int64
        package let rooms: Int
        /// The highest room id it holds (0 for none): rooms above it were made after.
        package let highestID: RoomID
        private let bytes: [UInt8]

        package init(_ bytes: [UInt8]) throws(RoomSnapshotError) {
            let headerEnd = RoomSnapshot.magic.count + 8
            guard bytes.count >= headerEnd + RoomSnapshot.trailer, bytes.starts(with: RoomSnapshot.magic) else {
                throw .notASnapshot
            }
            var checksum = FNV1a()
            checksum.add(bytes[..<(bytes.count - 8)])
            guard checksum.value == bytes.littleEndian(UInt64.self, at: bytes.count - 8) else { throw .damaged }
            takenAtMs = Int64(bitPattern: bytes.littleEndian(UInt64.self, at: RoomSnapshot.magic.count))
            var offset = headerEnd
            var count = 0
            var highest: Int64 = 0
            let recordsEnd = bytes.count - RoomSnapshot.trailer
            while offset < recordsEnd {
                guard offset + RoomSnapshot.recordHead <= recordsEnd,
                    let room = RoomSnapshot.room(in: bytes, at: offset, decodingTopic: false)
                else { throw .damaged }
                offset = room.next
                highest = max(highest, room.entry.room.id.rawValue)
                count += 1
            }
            guard offset == recordsEnd, bytes.littleEndian(UInt64.self, at: recordsEnd) == 0,
                bytes.littleEndian(UInt64.self, at: recordsEnd + 8) == UInt64(count)
            else { throw .damaged }
            self.rooms = count
            self.highestID = RoomID(highest)
            self.bytes = bytes
        }

        /// The rooms in the order written, `size` at a time.
        package func forEachPage(size: Int, _ body: ([IndexedRoom]) -> Void) {
            var page: [IndexedRoom] = []
            page.reserveCapacity(size)
            var offset = RoomSnapshot.magic.count + 8
            let recordsEnd = bytes.count - RoomSnapshot.trailer
            while offset < recordsEnd, let room = RoomSnapshot.room(in: bytes, at: offset, decodingTopic: true) {
                page.append(room.entry)
                offset = room.next
                if page.count == size {
                    body(page)
                    page.removeAll(keepingCapacity: true)
                }
            }
            if !page.isEmpty { body(page) }
        }
    }

    /// The record at `offset` and where the next begins; nil when it is not a
    /// valid room or runs past the records. Without `decodingTopic`, the topic is left empty.
    private static func room(in bytes: [UInt8], at offset: Int, decodingTopic: Bool) -> (
        entry: IndexedRoom, next: Int
    )? {
        let recordsEnd = bytes.count - trailer
        guard offset + recordHead <= recordsEnd else { return nil }
        let id = Int64(bitPattern: bytes.littleEndian(UInt64.self, at: offset))
        let x = Double(bitPattern: bytes.littleEndian(UInt64.self, at: offset + 8))
        let y = Double(bitPattern: bytes.littleEndian(UInt64.self, at: offset + 16))
        let visitedAtMs = Int64(bitPattern: bytes.littleEndian(UInt64.self, at: offset + 24))
        let zoom = bytes[offset + 32]
        let topicLength = Int(bytes.littleEndian(UInt16.self, at: offset + 33))
        let topicStart = offset + recordHead
        guard id > 0, topicStart + topicLength <= recordsEnd, let position = MercatorPoint(x: x, y: y),
            let level = ZoomLevel(Int(zoom))
        else { return nil }
        let topic =
            decodingTopic
            ? bytes.withUnsafeBufferPointer {
                String(
                    decoding: UnsafeBufferPointer(rebasing: $0[topicStart..<topicStart + topicLength]), as: UTF8.self)
            } : ""
        return (
            IndexedRoom(
                room: RoomInfo(id: RoomID(id), position: position, zoom: level, topic: topic), visitedAtMs: visitedAtMs),
            topicStart + topicLength
        )
    }
}

extension [UInt8] {
    fileprivate mutating func appendLittleEndian<Integer: FixedWidthInteger>(_ value: Integer) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    fileprivate func littleEndian<Integer: FixedWidthInteger>(_: Integer.Type, at offset: Int) -> Integer {
        var value = Integer.zero
        for i in (0..<MemoryLayout<Integer>.size).reversed() { value = value << 8 | Integer(self[offset + i]) }
        return value
    }
}

/// Why a room snapshot was not read.
package enum RoomSnapshotError: Error, Equatable {
    /// Not a room snapshot of this format's version.
    case notASnapshot
    /// Cut short or changed after it was written.
    case damaged
}

/// 64-bit FNV-1a: cheap, and enough to tell a torn or changed file (it guards
/// against accidents, not against someone who can write the gateway's files).
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ bytes: some Collection<UInt8>) {
        var hash = value
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        value = hash
    }
}
