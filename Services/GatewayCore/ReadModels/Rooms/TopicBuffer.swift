/// Every indexed room's topic as UTF-8 in one byte array; a record holds its
/// offset and length. (A `String` of over 15 bytes is a heap object of its own:
/// a benchmark topic, "bench room 123456", cost 17 bytes here and ~64 there.)
/// A removed room's bytes stay until compaction, which runs once they outweigh
/// the live ones, so a bulk removal gives the space back at amortized O(1) a room.
struct TopicBuffer {
    private var bytes: [UInt8] = []
    /// Bytes of removed rooms' topics still in `bytes`.
    private(set) var garbage = 0

    var byteCount: Int { bytes.count }

    /// Appends a topic; its offset and length. Topics are at most 100 scalars
    /// (`Limits.topicLength`), 400 bytes: a longer one is cut at 65,535 bytes.
    mutating func append(_ topic: String) -> (offset: UInt32, length: UInt16) {
        var topic = topic
        return topic.withUTF8 { append($0) }
    }

    /// Appends a topic's bytes as another buffer held them (cut as `append(_: String)` cuts).
    mutating func append(_ utf8: UnsafeBufferPointer<UInt8>) -> (offset: UInt32, length: UInt16) {
        let offset = UInt32(bytes.count)
        bytes.append(contentsOf: utf8.prefix(Int(UInt16.max)))
        return (offset, UInt16(bytes.count - Int(offset)))
    }

    mutating func reserveCapacity(_ count: Int) { bytes.reserveCapacity(count) }

    func string(offset: UInt32, length: UInt16) -> String {
        withBytes(offset: offset, length: length) { String(decoding: $0, as: UTF8.self) }
    }

    func withBytes<Result>(offset: UInt32, length: UInt16, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        bytes.withUnsafeBufferPointer {
            body(UnsafeBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + Int(length)]))
        }
    }

    /// A topic's bytes are no longer used.
    mutating func release(length: UInt16) { garbage += Int(length) }

    var needsCompaction: Bool { garbage > 64 * 1024 && garbage * 2 > bytes.count }

    /// Rewrites the live topics (those of records not free) side by side, in slot order.
    mutating func compact(_ records: inout [RoomRecord]) {
        var packed: [UInt8] = []
        packed.reserveCapacity(bytes.count - garbage)
        bytes.withUnsafeBufferPointer { old in
            for slot in records.indices where !records[slot].isFree {
                let start = Int(records[slot].topicOffset)
                records[slot].topicOffset = UInt32(packed.count)
                packed.append(contentsOf: old[start..<start + Int(records[slot].topicLength)])
            }
        }
        bytes = packed
        garbage = 0
    }
}
