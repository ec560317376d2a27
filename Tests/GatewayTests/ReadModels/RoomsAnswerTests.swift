import GeoChatDomain
import GeoChatLegacyProtocol
import Testing

@testable import GatewayCore

/// A `chats` answer written from the index's own bytes is the one its rooms as values give.
@Suite struct RoomsAnswerTests {
    @Test func theAnswerFromTheIndexsBytesIsTheAnswerOfItsRooms() {
        var index = RoomIndex()
        let topics = [
            "Harbour & Pier", "<b>\"quoted\" 'single'</b>", "line\r\nbreak", "Café Zoë", "🗺️ map room", "plain",
        ]
        for id in 1...300 {
            let room = RoomInfo(
                id: RoomID(Int64(id)),
                position: MercatorPoint(x: 0.25 + Double(id % 17) * 0.001, y: 0.5 + Double(id % 13) * 1e-7)!,
                zoom: ZoomLevel(6 + id % 6)!, topic: topics[id % topics.count] + " \(id)")
            index.upsert(room, visitedAtMs: Int64(id % 40))
        }
        for cap in [0, 1, 7, 500] {
            let query = RegionQuery(
                box: MercatorBox(MercatorPoint(x: 0.2, y: 0.4)!, MercatorPoint(x: 0.3, y: 0.6)!), zooms: 5...12,
                cap: cap)
            let written = index.withRooms(in: query) { rooms in
                var document = LegacyXML.RoomsDocument(rooms: rooms.count)
                rooms.forEachRoom { document.append(id: $0, position: $1, zoom: $2, topicUTF8: $3) }
                return document.finish()
            }
            let values = index.rooms(in: query)
            #expect(values.count == min(cap, 300))
            #expect(String(decoding: written, as: UTF8.self) == LegacyXML.rooms(values), "cap \(cap)")
        }
    }
}
