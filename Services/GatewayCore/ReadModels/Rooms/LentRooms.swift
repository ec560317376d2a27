import GeoChatDomain

/// The rooms of a region query's answer in its order (by id), as the index
/// holds them: an answer written as bytes from them makes no `RoomInfo` and no
/// topic `String` (a heap object each, for a topic over 15 bytes; up to 500 an
/// answer). Use it inside the call that lends it only: it shares the index's
/// storage, which a change made while it is kept would have to copy whole.
package struct LentRooms {
    private enum Source {
        /// What `RoomIndex` found: ids and slots of its records, and its topics.
        case index(found: [(id: Int64, slot: Int32)], records: [RoomRecord], topics: TopicBuffer)
        /// What the rooms service answered (before the index is loaded).
        case list([RoomInfo])
    }

    private let source: Source

    init(found: [(id: Int64, slot: Int32)], records: [RoomRecord], topics: TopicBuffer) {
        source = .index(found: found, records: records, topics: topics)
    }

    init(_ rooms: [RoomInfo]) { source = .list(rooms) }

    package var count: Int {
        switch source {
        case .index(let found, _, _): found.count
        case .list(let rooms): rooms.count
        }
    }

    /// Each room in order; its topic's UTF-8 bytes are valid inside `body` only.
    package func forEachRoom(
        _ body: (_ id: RoomID, _ position: MercatorPoint, _ zoom: ZoomLevel, _ topicUTF8: UnsafeBufferPointer<UInt8>)
            -> Void
    ) {
        switch source {
        case .index(let found, let records, let topics):
            for (_, slot) in found {
                let record = records[Int(slot)]
                topics.withBytes(offset: record.topicOffset, length: record.topicLength) {
                    body(RoomID(record.id), record.position, record.zoomLevel, $0)
                }
            }
        case .list(let rooms):
            for room in rooms {
                var topic = room.topic
                topic.withUTF8 { body(room.id, room.position, room.zoom, $0) }
            }
        }
    }

    /// The rooms as values, for an answer that is not written as bytes.
    package var infos: [RoomInfo] {
        if case .list(let rooms) = source { return rooms }
        var infos: [RoomInfo] = []
        infos.reserveCapacity(count)
        forEachRoom { id, position, zoom, topic in
            infos.append(
                RoomInfo(id: id, position: position, zoom: zoom, topic: String(decoding: topic, as: UTF8.self)))
        }
        return infos
    }
}
