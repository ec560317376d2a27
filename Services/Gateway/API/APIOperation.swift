import HTTPTypes

/// One operation of the JSON API as `openapi.json` documents it: its
/// `operationId`, method, path under `/api/v1` (the document's template, which
/// the router reads too: `{room}` is a capture) and the parameters its handler
/// reads. `APIRoutes` registers every route through one of these, and
/// `APIParameters` reads only the names its operation lists, so this table is
/// what the code does; `OpenAPISpecTests` holds the router and this table to
/// the document, both ways.
struct APIOperation: Sendable, Hashable {
    let id: String
    let method: HTTPRequest.Method
    let path: String
    /// The query parameters the handler reads, each one documented.
    let query: [String]
    /// Spellings the handler reads besides `query`, named in those parameters'
    /// descriptions rather than documented apart (a place as `x` and `y`
    /// instead of `latitude` and `longitude`), so a generated request never
    /// sends both.
    let alternatives: [String]
    /// The request headers the handler reads, documented as parameters.
    let headers: [String]

    init(
        _ id: String, _ method: HTTPRequest.Method, _ path: String, query: [String] = [], alternatives: [String] = [],
        headers: [String] = []
    ) {
        self.id = id
        self.method = method
        self.path = path
        self.query = query
        self.alternatives = alternatives
        self.headers = headers
    }

    /// Whether the handler may read the query parameter `name`.
    func reads(_ name: String) -> Bool { query.contains(name) || alternatives.contains(name) }

    /// The path parameters: the template's `{…}` segments.
    var pathParameters: [String] {
        path.split(separator: "/").filter { $0.hasPrefix("{") && $0.hasSuffix("}") }
            .map { String($0.dropFirst().dropLast()) }
    }
}

extension APIOperation {
    static let openapi = Self("openapi", .get, "/openapi.json")
    static let startSession = Self("startSession", .post, "/sessions")
    static let renameSession = Self("renameSession", .patch, "/session")
    static let endSession = Self("endSession", .delete, "/session")
    static let roomsInBox = Self(
        "roomsInBox", .get, "/rooms", query: ["south", "west", "north", "east", "minZoom", "maxZoom"],
        alternatives: ["x1", "y1", "x2", "y2"])
    static let createRoom = Self("createRoom", .post, "/rooms")
    static let nearestRooms = Self(
        "nearestRooms", .get, "/rooms/nearest",
        query: [
            "latitude", "longitude", "radius", "limit", "minZoom", "maxZoom", "direction", "fieldOfView", "semiMajor",
            "semiMinor", "orientation",
        ],
        alternatives: ["x", "y"])
    static let room = Self("room", .get, "/rooms/{room}")
    static let joinRoom = Self("joinRoom", .post, "/rooms/{room}/join")
    static let leaveRoom = Self("leaveRoom", .post, "/rooms/{room}/leave")
    static let messages = Self("messages", .get, "/rooms/{room}/messages", query: ["after", "limit", "wait"])
    static let say = Self("say", .post, "/rooms/{room}/messages")
    static let participants = Self("participants", .get, "/rooms/{room}/participants")
    static let transcript = Self("transcript", .get, "/rooms/{room}/transcript", query: ["after", "limit", "format"])
    static let events = Self("events", .get, "/rooms/{room}/events", query: ["after"], headers: ["Last-Event-ID"])

    /// Every operation, in the document's order.
    static let all: [APIOperation] = [
        openapi, startSession, renameSession, endSession, roomsInBox, createRoom, nearestRooms, room, joinRoom,
        leaveRoom, messages, say, participants, transcript, events,
    ]
}
