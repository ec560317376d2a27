import GatewayCore
import GeoChatAdminAPI
import GeoChatDomain
import GeoChatRuntime
import Hummingbird

/// Rooms: list and search (rooms answer place, visits and members, messaging
/// the message counts), one room with its present participants, removal now.
extension AdminEndpoints {
    func rooms(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let limit = try AdminJSON.int(call.request, "limit", default: 50, range: 1...1000)
        let search = AdminJSON.text(call.request, "q")
        var rooms = try await backend.send(ListRoomsForAdmin(search: search, limit: limit))
        let counts = try await backend.messageCounts(rooms.map(\.id))
        for i in rooms.indices { rooms[i].messages = counts[rooms[i].id] ?? 0 }
        return AdminJSON.response(AdminAPI.RoomsResponse(rooms: rooms))
    }

    func room(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let id = try roomID(call)
        let found = try await backend.send(ListRoomsForAdmin(search: String(id), limit: 1000))
        guard var room = found.first(where: { $0.id == id })
        else { throw .notFound("no room \(id)") }
        room.messages = try await backend.messageCounts([id])[id] ?? 0
        room.participants = PresentParticipants.nicks(
            of: try await backend.send(ListMembers(room: id)), presence: presence, sessions: sessions,
            timeoutMs: settings.presenceTimeoutMs, nowMs: WallClock.nowMs())
        return AdminJSON.response(AdminAPI.RoomResponse(room: room))
    }

    /// A page of the room's transcript from the messaging service (`after` 0:
    /// from the first message), or its `latest` messages (what a moderator reads first).
    func transcript(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let id = try roomID(call)
        if AdminJSON.text(call.request, "latest") != nil {
            guard AdminJSON.text(call.request, "after") == nil else {
                throw .badRequest("give 'after' or 'latest', not both")
            }
            let latest = try AdminJSON.int(
                call.request, "latest", default: Limits.maxMessageLimit, range: 1...Limits.maxMessageLimit)
            let page = try await backend.send(ReadHistory(room: id, after: nil, limit: latest, skipRemoved: true))
            return AdminJSON.response(AdminAPI.TranscriptResponse(room: id, messages: page.messages, next: nil))
        }
        let after = MessageID(Int64(try AdminJSON.int(call.request, "after", default: 0, range: 0...Int.max)))
        let limit = try AdminJSON.int(
            call.request, "limit", default: Limits.maxMessageLimit, range: 1...Limits.maxMessageLimit)
        let page = try await backend.send(ReadHistory(room: id, after: after, limit: limit, skipRemoved: true)).messages
        return AdminJSON.response(
            AdminAPI.TranscriptResponse(room: id, messages: page, next: page.count == limit ? page.last?.id : nil))
    }

    /// `DELETE rooms/{room}?reason=…`
    func removeRoom(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let id = try roomID(call)
        let reason = try Self.reason(AdminJSON.text(call.request, "reason"))
        _ = try await audited(call, "remove-room", "room \(id)", reason: reason) { () async throws(AdminFailure) in
            (try await backend.send(keys.operatorCommands.sealed(RemoveRoom(room: id, by: call.name))), "")
        }
        // This gateway answers 404 at once; the others on the `removed` event.
        messages.remove([id])
        return AdminJSON.response(AdminAPI.RemovedResponse(removed: id))
    }

    /// `PATCH rooms/{room}` with `ChangeRoomRequest`: a new topic, place or
    /// zoom level; what is absent stays. This gateway's index changes at once,
    /// the others' on the `changed` event.
    func changeRoom(_ call: AdminCall) async throws(AdminFailure) -> Response {
        let id = try roomID(call)
        let body = try await AdminJSON.body(AdminAPI.ChangeRoomRequest.self, of: call.request)
        var topic: RoomTopic?
        if let text = body.topic {
            do throws(ProtocolError) { topic = try RoomTopic(checking: text) } catch { throw AdminFailure(error) }
        }
        var position: MercatorPoint?
        switch (body.latitude, body.longitude) {
        case (nil, nil): break
        case (let latitude?, let longitude?):
            guard let place = MercatorPoint(longitude: longitude, latitude: latitude) else {
                throw .badRequest("'latitude' must be within ±85.05° and 'longitude' within ±180°")
            }
            position = place
        default: throw .badRequest("give both 'latitude' and 'longitude', or neither")
        }
        var zoom: ZoomLevel?
        if let level = body.zoom {
            guard let valid = ZoomLevel(level) else { throw .badRequest("'zoom' must be from 0 to 17") }
            zoom = valid
        }
        guard topic != nil || position != nil || zoom != nil else {
            throw .badRequest("give at least one of 'topic', 'latitude' and 'longitude', 'zoom'")
        }
        let what = [
            topic.map { "topic \($0.value)" }, position.map { _ in "place" }, zoom.map { "zoom \($0.value)" },
        ].compactMap { $0 }.joined(separator: ", ")
        let change = ChangeRoom(room: id, topic: topic, position: position, zoom: zoom, by: call.name)
        let room = try await audited(call, "change-room", "room \(id)", reason: try Self.reason(body.reason)) {
            () async throws(AdminFailure) in (try await backend.send(keys.operatorCommands.sealed(change)), what)
        }
        rooms.changed(room)
        return AdminJSON.response(AdminAPI.ChangedRoomResponse(room))
    }

    func roomID(_ call: AdminCall) throws(AdminFailure) -> RoomID {
        guard let raw = call.parameter("room"), let id = RoomID(raw), id > 0 else {
            throw .badRequest("the room id must be a positive integer")
        }
        return id
    }
}
