import Foundation
import GeoChatDomain
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import Gateway
@testable import GatewayCore

/// openapi.json is the JSON API's one source, and the code cannot drift from
/// it: each check goes both ways, over the document the gateway serves.
/// - the router's routes under `/api/v1` are the documented operations;
/// - the parameters each handler reads (`APIOperation`, which `APIParameters`
///   enforces) are the documented ones, and a bad value of each is refused;
/// - the models encode (with `APIJSON`) and decode as the schemas say.
@Suite struct OpenAPISpecTests {
    let spec: SpecDocument
    let cluster: GatewayRouterTests

    init() throws {
        spec = try SpecDocument(bytes: OpenAPISpec.bytes)
        cluster = try GatewayRouterTests()
    }

    @Test func theDocumentIsServedAsItIs() async throws {
        #expect(spec.root["openapi"] as? String == "3.1.0")
        try await cluster.application.test(.router) { client in
            try await client.execute(uri: "/api/v1/openapi.json", method: .get) { response in
                #expect(response.status == .ok)
                #expect(Array(buffer: response.body) == OpenAPISpec.bytes)
            }
        }
    }

    /// (a) Every route the router has under `/api/v1` is a documented
    /// operation, and every documented operation is routed.
    @Test func everyRouteIsDocumentedAndEveryOperationIsRouted() throws {
        let router = cluster.gateway.buildRouter(health: cluster.health)
        let prefix = APIRoutes.base + "/"
        let routed = Set(
            router.routes.map { "\($0.method.rawValue) \($0.path.description)" }
                .filter { $0.split(separator: " ")[1].hasPrefix(prefix) }
                .map { $0.replacingOccurrences(of: " " + APIRoutes.base, with: " ") }
                // The catch-all that answers unknown paths with a problem document.
                .filter { $0 != "GET /**" })
        let documented = Set(spec.operations.map { "\($0.method) \($0.path)" })
        #expect(!documented.isEmpty)
        #expect(routed.subtracting(documented).sorted() == [], "routed but not documented")
        #expect(documented.subtracting(routed).sorted() == [], "documented but not routed")
    }

    /// (b) The parameters of each operation: the document's are the ones its handler reads (`APIOperation`), both ways.
    @Test func everyOperationReadsTheDocumentedParameters() throws {
        let table = Dictionary(uniqueKeysWithValues: APIOperation.all.map { ($0.id, $0) })
        #expect(Set(table.keys) == Set(spec.operations.map(\.id)), "APIOperation.all and the document's operationIds")
        for operation in spec.operations {
            let code = try #require(table[operation.id], "\(operation.id) is documented but not in APIOperation")
            let route = "\(code.method.rawValue) \(code.path)"
            #expect(route == "\(operation.method) \(operation.path)", "\(operation.id)")
            #expect(Set(operation.names(in: "query")) == Set(code.query), "\(operation.id): query parameters")
            #expect(Set(operation.names(in: "header")) == Set(code.headers), "\(operation.id): header parameters")
            #expect(Set(operation.names(in: "path")) == Set(code.pathParameters), "\(operation.id): path parameters")
            for name in code.alternatives {
                #expect(
                    operation.descriptions.contains("`\(name)`"), "\(operation.id): '\(name)' is read, named nowhere")
            }
        }
    }

    /// (b) The handler reads each documented parameter (and each alternative
    /// spelling): a request that is fine without it is refused with a `400`
    /// when that one parameter is not valid.
    @Test func aBadValueOfEveryDocumentedParameterIsRefused() async throws {
        let probes = try spec.operations.compactMap { operation -> Probe? in
            let code = try #require(APIOperation.all.first { $0.id == operation.id })
            guard !(code.query + code.alternatives + code.headers + code.pathParameters).isEmpty else { return nil }
            // A documented body, so that only the parameter under test can be wrong.
            let body = try operation.requestSchema.map {
                try JSONSerialization.data(withJSONObject: spec.example(of: $0))
            }
            return Probe(
                operation: code, base: try operation.requiredQuery(spec).map { [$0.0, $0.1] },
                body: body.map { Array($0) })
        }
        #expect(!probes.isEmpty)
        let cluster = self.cluster
        try await cluster.application.test(.router) { client in
            let (_, started, _) = try await cluster.json(client, .post, "/sessions", body: #"{"nick":"Probe"}"#)
            let session = try #require(started["session"] as? String)
            for probe in probes {
                let operation = probe.operation
                func send(room: String = "999", query: [[String]], headers: HTTPFields = [:]) async throws
                    -> (HTTPResponse.Status, String)
                {
                    var headers = headers
                    headers[.authorization] = "Bearer " + session
                    if probe.body != nil { headers[.contentType] = "application/json" }
                    let query = query.map { $0.joined(separator: "=") }.joined(separator: "&")
                    let path = operation.pathParameters.reduce(operation.path) {
                        $0.replacingOccurrences(of: "{\($1)}", with: room)
                    }
                    return try await client.execute(
                        uri: APIRoutes.base + path + (query.isEmpty ? "" : "?" + query), method: operation.method,
                        headers: headers, body: probe.body.map { ByteBuffer(bytes: $0) }
                    ) { ($0.status, String(buffer: $0.body)) }
                }
                let (fine, answer) = try await send(query: probe.base)
                #expect(fine != .badRequest, "\(operation.id) without a bad parameter: \(answer)")
                for name in operation.query + operation.alternatives {
                    let (status, body) = try await send(query: probe.base.filter { $0[0] != name } + [[name, "bad"]])
                    #expect(status == .badRequest, "\(operation.id) took \(name)=bad: \(status) \(body)")
                }
                for name in operation.headers {
                    var headers = HTTPFields()
                    headers[.init(name)!] = "bad"
                    let (status, body) = try await send(query: probe.base, headers: headers)
                    #expect(status == .badRequest, "\(operation.id) took the header \(name): bad: \(status) \(body)")
                }
                for name in operation.pathParameters {
                    let (status, body) = try await send(room: "bad", query: probe.base)
                    #expect(status == .badRequest, "\(operation.id) took the path's \(name) bad: \(status) \(body)")
                }
            }
        }
    }

    /// One operation to send bad parameters to: its required query parameters (at their minimum) and a documented body.
    struct Probe: Sendable {
        let operation: APIOperation
        let base: [[String]]
        let body: [UInt8]?
    }

    /// (c) Each response body, encoded as the API encodes it, has the documented schema's properties and types.
    @Test func theResponseModelsEncodeAsDocumented() throws {
        let place = MercatorPoint(x: 0.25, y: 0.75)!
        let roomInfo = RoomInfo(id: 7, position: place, zoom: ZoomLevel(12)!, topic: "Tor")
        let room = APIModels.Room(roomInfo)
        let message = APIModels.Message(
            ChatMessage(room: 7, id: 3, nick: "Lydia", text: "hello", addedAt: 1_700_000_000_000))
        let nearby = APIModels.NearbyRoom(NearbyRoom(room: roomInfo, distanceMetres: 12.5, bearingDegrees: 90.5))
        let session = APIModels.Session(SessionInfo(id: SessionID.random(), nick: "Lydia", version: 1))
        let samples: [(String, any Encodable)] =
            [
                ("Session", session), ("Room", room), ("Rooms", APIModels.Rooms(rooms: [room])),
                ("NearbyRoom", nearby), ("NearbyRooms", APIModels.NearbyRooms(rooms: [nearby])), ("Message", message),
                ("Messages", APIModels.Messages(room: 7, messages: [message])),
                ("Transcript", APIModels.Transcript(room: 7, messages: [message], next: 3)),
                ("Transcript", APIModels.Transcript(room: 7, messages: [message], next: nil)),
                ("Participants", APIModels.Participants(room: 7, participants: ["Lydia"])),
            ] + ProtocolError.Code.allCases.map { ("Problem", Problem(ProtocolError($0, "why"))) }
        for (name, sample) in samples {
            let json = try JSONDecoder().decode(JSONValue.self, from: Data(buffer: APIJSON.encode(sample)))
            let problems = spec.mismatches(json, spec.schema(name), at: name)
            #expect(problems == [], "\(name)")
        }
        // Every code the API can answer is in the documented enum, and the enum holds no other.
        let code = spec.object(spec.object(spec.schema("Problem")["properties"])["code"])
        let codes = try #require(code["enum"] as? [String])
        #expect(Set(codes) == Set(ProtocolError.Code.allCases.map(\.rawValue)))
        // Every documented object schema is a response or request body checked here.
        let requests = Set(Self.requestBodies.map(\.schema))
        let objects = spec.schemaNames.filter { spec.schema($0)["type"] as? String == "object" }
        let unchecked = Set(objects).subtracting(samples.map(\.0)).subtracting(requests)
        #expect(unchecked.sorted() == [], "schemas no model checks")
    }

    static let requestBodies: [(schema: String, decode: @Sendable ([UInt8]) throws -> Any)] = [
        ("NickBody", { try APIJSON.decode(APIModels.StartSession.self, from: $0) }),
        ("NickBody", { try APIJSON.decode(APIModels.Rename.self, from: $0) }),
        ("NewRoom", { try APIJSON.decode(APIModels.CreateRoom.self, from: $0) }),
        ("NewMessage", { try APIJSON.decode(APIModels.Say.self, from: $0) }),
    ]

    /// (c) Each request body model reads every documented property, of the documented type, and no other.
    @Test func theRequestModelsReadWhatIsDocumented() throws {
        for (name, decode) in Self.requestBodies {
            let schema = spec.schema(name)
            let body = try spec.example(of: schema)
            let model = try decode(Array(JSONSerialization.data(withJSONObject: body)))
            let fields = Mirror(reflecting: model).children
            let documented = Set(spec.object(schema["properties"]).keys)
            #expect(Set(fields.compactMap(\.label)) == documented, "\(name): \(type(of: model))")
            for field in fields {
                let value = Mirror(reflecting: field.value)
                let unset = value.displayStyle == .optional && value.children.isEmpty
                #expect(!unset, "\(name): \(type(of: model)).\(field.label ?? "?") is not read from the body")
            }
        }
    }
}
