import GatewayCore
import GeoChatDomain
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The JSON API under `/api/v1` (docs/api.md; the contract is openapi.json,
/// `OpenAPISpec`, served at `/api/v1/openapi.json`). Each route is registered
/// from its `APIOperation`; every operation is a `ChatActions` call with the
/// phones' rules and limits; only the spelling differs.
struct APIRoutes: Sendable {
    let actions: ChatActions
    let events: RoomEventStream
    let settings: GatewaySettings
    /// The sequence every chat request goes through (built once, shared with the legacy routes).
    let requests: ChatRequests

    static let base = "/api/v1"

    func register(on router: Router<GatewayRequestContext>) {
        let api = router.group(RouterPath(Self.base))
        api.on(.openapi) { _, _ in
            Response(
                status: .ok, headers: [.contentType: APIJSON.contentType],
                body: .init(byteBuffer: ByteBuffer(bytes: OpenAPISpec.bytes)))
        }

        api.on(.startSession) { request, context in
            await respond("api_start", request, context) { client async throws(ProtocolError) -> Response in
                let body = try APIJSON.decode(APIModels.StartSession.self, from: try await body(request))
                let nick = try Self.nickname(body.nick)
                let session = try await actions.start(nick: nick, client: client)
                return APIJSON.response(APIModels.Session(session), status: .created)
            }
        }
        api.on(.renameSession) { request, context in
            await respond("api_nick", request, context) { client async throws(ProtocolError) -> Response in
                let session = try Self.session(request)
                let nick = try Self.nickname(
                    try APIJSON.decode(APIModels.Rename.self, from: try await body(request)).nick)
                let renamed = try await actions.rename(session, to: nick, client: client)
                return APIJSON.response(APIModels.Session(renamed))
            }
        }
        api.on(.endSession) { request, context in
            await respond("api_end", request, context) { _ async throws(ProtocolError) -> Response in
                try await actions.end(try Self.session(request))
                return Response(status: .noContent)
            }
        }

        api.on(.roomsInBox) { request, context in
            await respond("api_rooms", request, context) { client async throws(ProtocolError) -> Response in
                let parameters = try APIParameters(request, for: .roomsInBox)
                let query = RegionQuery(box: try parameters.box(), zooms: try parameters.zooms(), cap: settings.roomCap)
                let found = try await actions.rooms(in: query, client: client)
                return APIJSON.response(APIModels.Rooms(rooms: found.map(APIModels.Room.init)))
            }
        }
        api.on(.nearestRooms) { request, context in
            await respond("api_nearest", request, context) { client async throws(ProtocolError) -> Response in
                let query = try Self.nearbyQuery(try APIParameters(request, for: .nearestRooms))
                let found = try actions.nearest(query, client: client)
                return APIJSON.response(APIModels.NearbyRooms(rooms: found.map(APIModels.NearbyRoom.init)))
            }
        }
        api.on(.createRoom) { request, context in
            await respond("api_create", request, context) { client async throws(ProtocolError) -> Response in
                let session = try Self.session(request)
                let body = try APIJSON.decode(APIModels.CreateRoom.self, from: try await body(request))
                let position = try APIPlaces.given(
                    latitude: body.latitude, longitude: body.longitude, x: body.x, y: body.y)
                guard let raw = body.zoom else { throw .missing("zoom") }
                guard let zoom = ZoomLevel(raw) else { throw .bad("zoom", "must be a whole number from 0 to 17") }
                guard let rawTopic = body.topic else { throw .missing("topic") }
                let topic = try RoomTopic(checking: rawTopic)
                let room = try await actions.create(
                    session: session, position: position.position, zoom: zoom, topic: topic,
                    client: client)
                return APIJSON.response(APIModels.Room(room), status: .created)
            }
        }
        api.on(.room) { request, context in
            await respond("api_room", request, context) { client async throws(ProtocolError) -> Response in
                APIJSON.response(
                    APIModels.Room(try await actions.room(try Self.room(context), client: client)))
            }
        }
        api.on(.joinRoom) { request, context in
            await respond("api_join", request, context) { client async throws(ProtocolError) -> Response in
                let session = try Self.session(request)
                let room = try Self.room(context)
                try await actions.join(session: session, room: room, client: client)
                return Response(status: .noContent)
            }
        }
        api.on(.leaveRoom) { request, context in
            await respond("api_leave", request, context) { client async throws(ProtocolError) -> Response in
                let session = try Self.session(request)
                let room = try Self.room(context)
                try await actions.leave(session: session, room: room, client: client)
                return Response(status: .noContent)
            }
        }
        api.on(.messages) { request, context in
            await respond("api_messages", request, context) { client async throws(ProtocolError) -> Response in
                let room = try Self.room(context)
                let parameters = try APIParameters(request, for: .messages)
                let after = try parameters.messageID("after")
                let limit =
                    try parameters.integer("limit", in: 1...Limits.maxMessageLimit) ?? Limits.defaultMessageLimit
                let wait = try parameters.integer("wait", in: Limits.maxWaitSeconds) ?? 0
                let found = try await actions.messages(
                    room: room, past: after, limit: limit, session: try Self.optionalSession(request),
                    wait: .seconds(wait), client: client)
                return APIJSON.response(APIModels.Messages(room: room, messages: found.map(APIModels.Message.init)))
            }
        }
        api.on(.say) { request, context in
            await respond("api_say", request, context) { client async throws(ProtocolError) -> Response in
                let session = try Self.session(request)
                let room = try Self.room(context)
                let body = try APIJSON.decode(APIModels.Say.self, from: try await body(request))
                guard let raw = body.text else { throw .missing("text") }
                let text = try MessageText(checking: raw, field: "text")
                let stored = try await actions.say(
                    session: session, room: room, text: text, client: client)
                return APIJSON.response(APIModels.Message(stored), status: .created)
            }
        }
        api.on(.participants) { request, context in
            await respond("api_participants", request, context) { client async throws(ProtocolError) -> Response in
                let room = try Self.room(context)
                let participants = try await actions.participants(of: room, client: client)
                return APIJSON.response(APIModels.Participants(room: room, participants: participants))
            }
        }
        api.on(.transcript) { request, context in
            await respond("api_transcript", request, context) { client async throws(ProtocolError) -> Response in
                let room = try Self.room(context)
                let parameters = try APIParameters(request, for: .transcript)
                let page = try TranscriptPage(room: room, parameters: parameters, accept: request.headers[.accept])
                let found = try await actions.transcript(
                    room: room, after: page.after, limit: page.limit, client: client)
                return page.response(found)
            }
        }
        api.on(.events) { request, context in
            if let response = openStreamAtOnce(request, context) { return response }
            return await openStream(request, context).value
        }
        // Anything else under the API is a problem document too, not the router's plain 404.
        api.on("**", method: .get) { request, context in
            Problem(ProtocolError(.unknownCommand, "no such resource: \(request.uri.path)")).response(status: 404)
        }
    }

    // A stream's connection task keeps the stack its deepest call took for as
    // long as the stream is open (RoomEventStream, "Memory"). So opening one
    // awaits nothing when it can, and what it must await runs in a task of its
    // own. Neither function is async, nor inlined into the route, so that the
    // request and its context are copied on the thread's stack.

    /// Opens a push stream on a room this gateway's index holds, or answers
    /// why not; nil for a room the index does not hold (`openStream` then).
    @inline(never)
    private func openStreamAtOnce(_ request: Request, _ context: GatewayRequestContext) -> Response? {
        let started = ContinuousClock.now
        do throws(ProtocolError) {
            let room = try Self.room(context)
            let after = try RoomEventStream.resumePoint(request, try APIParameters(request, for: .events))
            guard actions.rooms.room(room) != nil else { return nil }
            let opened = try stream(room, after, requests.client(request, context), context)
            return requests.finish(
                "api_events", request, since: started, .success(opened), answer: Self.asBuilt, refusal: Self.problem)
        } catch {
            return requests.finish(
                "api_events", request, since: started, .failure(error), answer: Self.asBuilt, refusal: Self.problem)
        }
    }

    /// Opens a push stream on a room the rooms service is asked about, in a task of its own.
    @inline(never)
    private func openStream(_ request: Request, _ context: GatewayRequestContext) -> Task<Response, Never> {
        Task {
            await respond("api_events", request, context) { client async throws(ProtocolError) -> Response in
                let room = try Self.room(context)
                let after = try RoomEventStream.resumePoint(request, try APIParameters(request, for: .events))
                _ = try await actions.room(room, client: client)
                return try stream(room, after, client, context)
            }
        }
    }

    private func stream(
        _ room: RoomID, _ after: MessageID, _ client: ChatClient, _ context: GatewayRequestContext
    ) throws(ProtocolError) -> Response {
        try events.open(room: room, after: after, client: client, connection: context.channel)
    }

    // MARK: The parts every operation shares

    /// An operation through the chat request sequence (`ChatRequests`): its
    /// answer as built, a refusal as a problem document.
    private func respond(
        _ name: String, _ request: Request, _ context: GatewayRequestContext,
        _ body: @escaping (ChatClient) async throws(ProtocolError) -> Response
    ) async -> Response {
        await requests.serve(request, context, unread: name, answer: Self.asBuilt, refusal: Self.problem) {
            () throws(ProtocolError) -> ChatRequests.Call<Response> in
            .init(name: name, session: try? Self.optionalSession(request), perform: body)
        }
    }

    private static func asBuilt(_ response: Response) -> Response { response }

    private static func problem(_ error: ProtocolError) -> Response {
        Problem(error).response(retryAfterSeconds: error.retryAfterSeconds)
    }

    private func body(_ request: Request) async throws(ProtocolError) -> [UInt8] {
        if let type = request.headers[.contentType], !type.lowercased().hasPrefix(APIJSON.contentType) {
            throw ProtocolError(.badParam, "the body must be application/json")
        }
        return try await RequestBody.collect(request, timeout: settings.bodyTimeout)
    }

    static func nickname(_ raw: String?) throws(ProtocolError) -> Nickname {
        guard let raw else { throw .missing("nick") }
        guard let nick = Nickname(raw) else { throw .invalidNick }
        return nick
    }

    /// The session of `Authorization: Bearer <session id>`.
    static func session(_ request: Request) throws(ProtocolError) -> SessionID {
        guard let session = try optionalSession(request) else {
            throw ProtocolError(.invalidSession, "this needs a session: send 'Authorization: Bearer <session>'")
        }
        return session
    }

    static func optionalSession(_ request: Request) throws(ProtocolError) -> SessionID? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", let id = SessionID(String(parts[1])) else {
            throw .invalidSession
        }
        return id
    }

    static func room(_ context: GatewayRequestContext) throws(ProtocolError) -> RoomID {
        guard let raw = context.parameters.get("room"), let id = RoomID(raw) else {
            throw .bad("room", "is not a room id")
        }
        guard id > 0 else { throw .noSuchChat }
        return id
    }

    /// `latitude`/`longitude` (or `x`/`y`), `radius` metres (default 1000),
    /// `limit` (default 10), zooms; a sector (`direction` and `fieldOfView`) or
    /// an ellipse (`semiMajor`, `semiMinor`, `orientation`; its reach is the semi-major axis).
    static func nearbyQuery(_ p: APIParameters) throws(ProtocolError) -> NearbyQuery {
        let center = try p.place()
        let limit = try p.integer("limit", in: NearbyQuery.limits) ?? NearbyQuery.defaultLimit
        let zooms = try p.zooms()
        var radius = try p.number("radius") ?? 1000
        guard radius > 0, radius <= NearbyQuery.maxRadiusMetres else {
            throw .bad("radius", "must be more than 0 and at most \(Int(NearbyQuery.maxRadiusMetres)) metres")
        }
        var shape = NearbyQuery.Shape.circle
        if p.has("direction") || p.has("fieldOfView") {
            guard let direction = try p.number("direction") else { throw .missing("direction") }
            guard let fieldOfView = try p.number("fieldOfView") else { throw .missing("fieldOfView") }
            guard (0...360).contains(direction) else { throw .bad("direction", "must be from 0 to 360 degrees") }
            guard fieldOfView > 0, fieldOfView <= 360 else {
                throw .bad("fieldOfView", "must be more than 0 and at most 360 degrees")
            }
            shape = .sector(direction: direction, fieldOfView: fieldOfView)
        }
        if p.has("semiMajor") || p.has("semiMinor") || p.has("orientation") {
            guard case .circle = shape else { throw .bad("semiMajor", "cannot be given with 'direction'") }
            guard let a = try p.number("semiMajor") else { throw .missing("semiMajor") }
            guard let b = try p.number("semiMinor") else { throw .missing("semiMinor") }
            let orientation = try p.number("orientation") ?? 0
            guard a > 0, a <= NearbyQuery.maxRadiusMetres else {
                throw .bad("semiMajor", "must be more than 0 and at most \(Int(NearbyQuery.maxRadiusMetres)) metres")
            }
            guard b > 0, b <= a else { throw .bad("semiMinor", "must be more than 0 and at most 'semiMajor'") }
            guard (0...360).contains(orientation) else { throw .bad("orientation", "must be from 0 to 360 degrees") }
            radius = a
            shape = .ellipse(semiMajor: a, semiMinor: b, orientation: orientation)
        }
        guard let query = NearbyQuery(center: center, radiusMetres: radius, limit: limit, zooms: zooms, shape: shape)
        else {
            throw .bad("radius", "does not make a query")  // each value was checked above
        }
        return query
    }
}

extension RouterMethods {
    /// The route of one documented operation: its method and path template.
    @discardableResult
    func on(
        _ operation: APIOperation,
        use handler: @Sendable @escaping (Request, Context) async throws -> some ResponseGenerator
    ) -> Self {
        on(RouterPath(operation.path), method: operation.method, use: handler)
    }
}

extension Problem {
    func response(status: Int) -> Response {
        var problem = self
        problem.status = status
        return problem.response()
    }
}
