import Foundation
import GeoChatAdminAPI
import GeoChatDomain
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import Gateway
@testable import GatewayCore

/// admin-openapi.json is the admin API's contract, and the code is held to it,
/// over the document the gateway serves (`AdminRouterFixture`: the operators'
/// listener of the in-memory cluster, logged in as `alice`):
/// - the routes under `<prefix>/admin` are the documented operations, both ways;
/// - every operation behind the token answers a documented `401` without one;
/// - each documented parameter is checked as documented: a value outside its
///   schema is refused with a documented `400`, one at its bounds is not;
/// - every operation, asked as documented (its body the schema's example),
///   succeeds, with the documented status, headers and body;
/// - the models encode as the schemas say (`required` is what they always
///   encode), and the request models read every documented property.
@Suite struct AdminOpenAPISpecTests {
    let spec: SpecDocument
    let fixture: AdminRouterFixture

    init() throws {
        spec = try SpecDocument(bytes: AdminOpenAPISpec.bytes)
        fixture = try AdminRouterFixture()
    }

    @Test func theDocumentIsServedAsItIs() async throws {
        #expect(spec.root["openapi"] as? String == "3.1.0")
        #expect((spec.root["servers"] as? [[String: Any]])?.first?["url"] as? String == "/admin")
        let fixture = self.fixture
        try await fixture.application.test(.router) { client in
            // Without a token: it is how a client learns to get one.
            try await client.execute(uri: fixture.base + "/openapi.json", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                #expect(Array(buffer: response.body) == AdminOpenAPISpec.bytes)
            }
        }
    }

    /// Every route the operators' listener has under `<prefix>/admin` is a
    /// documented operation, and every documented operation is routed.
    @Test func everyRouteIsDocumentedAndEveryOperationIsRouted() throws {
        let router = fixture.cluster.gateway.buildAdminRouter(health: fixture.cluster.health)
        let base = fixture.base
        let routed = Set(
            router.routes.compactMap { route -> String? in
                let path = route.path.description
                guard path.hasPrefix(base + "/") else { return nil }
                let relative = String(path.dropFirst(base.count))
                // The admin page (`AdminPageRoutes`), not the API.
                guard relative != "/ui", !relative.hasPrefix("/ui/") else { return nil }
                return "\(route.method.rawValue) \(relative)"
            })
        let documented = Set(spec.operations.map(Self.key))
        #expect(documented.count == spec.operations.count)
        #expect(!routed.isEmpty)
        #expect(routed.subtracting(documented).sorted() == [], "routed but not documented")
        #expect(documented.subtracting(routed).sorted() == [], "documented but not routed")
    }

    /// Every operation the document puts behind the bearer token answers a
    /// documented `401` (with `WWW-Authenticate`) without one, with one that is
    /// not a token of this server, and with an unknown one; the others do not.
    @Test func everyOperationBehindTheTokenAnswers401WithoutOne() async throws {
        var calls: [Call] = []
        for operation in spec.operations {
            if needsToken(operation) {
                for (authorization, what) in [
                    (Call.Authorization.none, "no token"), (.header("Bearer not-a-token"), "not a token"),
                    (.header("Bearer " + BearerToken.generate()), "an unknown token"),
                ] {
                    calls.append(call(operation, Self.probePath, authorization: authorization, what: what))
                }
            } else {
                // `login`'s example is the fixture's admin.
                calls.append(try call(operation, Self.probePath, authorization: .none, body: example(operation)))
            }
        }
        // Only these two are open: the way in, and how to find it.
        #expect(Set(spec.operations.filter { !needsToken($0) }.map(\.id)) == ["login", "openapi"])
        let answers = try await send(calls)
        for answer in answers {
            let operation = try #require(spec.operations.first { Self.key($0) == answer.call.operation })
            if needsToken(operation) {
                #expect(answer.status == .unauthorized, "\(answer.call.what)")
            } else {
                #expect(answer.status == .ok, "\(answer.call.what)")
            }
            #expect(undocumented(answer) == [], "\(answer.call.what)")
        }
    }

    /// Each documented query and path parameter is checked as documented,
    /// both ways: a value its schema refuses (not an integer, below the
    /// minimum, above the maximum, not in the enum, too long, empty) is refused
    /// with a documented `400`, while the same request without it, or with a
    /// query parameter at its documented bounds, is not a `400`.
    @Test func everyDocumentedParameterIsCheckedAsDocumented() async throws {
        var calls: [Call] = []
        for operation in spec.operations where !operation.parameters.isEmpty {
            let body = try example(operation)
            calls.append(call(operation, Self.probePath, body: body, what: "as documented"))
            for parameter in operation.parameters {
                let name = parameter["name"] as? String ?? "?"
                let inPath = parameter["in"] as? String == "path"
                let schema = spec.object(parameter["schema"])
                let bad = Self.badValues(schema, inPath: inPath)
                if Self.checkedByTheSessionService.contains("\(operation.id) \(name)") {
                    #expect(bad.isEmpty, "\(operation.id) \(name): probe it here")
                    continue
                }
                #expect(!bad.isEmpty, "\(operation.id): no value of '\(name)' to refuse")
                for value in bad {
                    var path = Self.probePath
                    var query: [(String, String)] = []
                    if inPath { path[name] = value } else { query.append((name, value)) }
                    calls.append(
                        call(
                            operation, path, query: query, body: body, refused: true,
                            what: "\(name)=\(value.prefix(12)) (\(value.count))"))
                }
                guard !inPath else { continue }
                for value in Self.boundValues(schema) {
                    calls.append(
                        call(
                            operation, Self.probePath, query: [(name, value)], body: body,
                            what: "\(name)=\(value.prefix(12)) (\(value.count))"))
                }
            }
        }
        let answers = try await send(calls)
        for answer in answers {
            if answer.call.refused {
                #expect(answer.status == .badRequest, "\(answer.call.what): \(answer.text)")
            } else {
                #expect(answer.status != .badRequest, "\(answer.call.what): \(answer.text)")
            }
            #expect(undocumented(answer) == [], "\(answer.call.what)")
        }
    }

    /// No input is nullable: a body field sent as null is refused (`RequestBody.nullField`, the JSON API's
    /// rule), nested ones too, rather than taken as absent as a decoder would.
    @Test func aBodyFieldSentAsNullIsRefused() async throws {
        var calls: [Call] = []
        for operation in spec.operations {
            guard let schema = operation.requestSchema, let object = try full(schema) as? [String: Any] else {
                continue
            }
            for key in object.keys.sorted() {
                var nulled = object
                nulled[key] = NSNull()
                let body = Array(try JSONSerialization.data(withJSONObject: nulled))
                calls.append(
                    call(operation, Self.probePath, body: body, refused: true, what: "\(operation.id) \(key): null"))
            }
        }
        #expect(calls.count >= 10)
        for answer in try await send(calls) {
            #expect(answer.status == .badRequest, "\(answer.call.what): \(answer.text)")
            #expect(answer.text.contains("is null"), "\(answer.call.what): \(answer.text)")
        }
    }

    /// Each operation reads the documented query parameters and body, both
    /// ways. The endpoints read their parameters by name where they use them
    /// (`AdminJSON.int`, `AdminJSON.text`) and their body as one type
    /// (`AdminJSON.body`), with no table to compare as the JSON API's
    /// `APIOperation`: these are read from the source, each route's endpoint
    /// in AdminRoutes.swift, its reads in its function in Admin*API.swift. The
    /// body's schema is named after its type.
    @Test func everyOperationReadsTheDocumentedParametersAndBody() throws {
        let reads = try Self.readsInSource()
        #expect(reads.count >= 20)
        for operation in spec.operations where operation.id != "openapi" {
            let code = try #require(reads[Self.key(operation)], "\(operation.id): no endpoint found in the source")
            let query = Set(operation.names(in: "query"))
            #expect(code.query == query, "\(operation.id): the query parameters read, and the documented ones")
            let documented = (operation.requestSchema as? [String: Any])?["$ref"] as? String
            let body = code.body.map { "#/components/schemas/" + ($0 == "[String: Int]" ? "SettingsChange" : $0) }
            #expect(body == documented, "\(operation.id): the body read, and the documented one")
        }
    }

    /// What one endpoint reads: its query parameters, by name, and its body's type.
    struct Reads: Equatable {
        var query: Set<String> = []
        var body: String?
    }

    /// What each route's endpoint reads (`METHOD /path` as documented), from the source.
    static func readsInSource() throws -> [String: Reads] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Services/Gateway/AdminAPI")
        // The functions of the endpoints' files, by name, each to the next one.
        var functions: [String: Substring] = [:]
        let header = try Regex(#"\n    (?:private )?func (\w+)"#)
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path)
        where file.hasPrefix("Admin") && file.hasSuffix("API.swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let starts = text.matches(of: header)
            for (index, start) in starts.enumerated() {
                let end = index + 1 < starts.count ? starts[index + 1].range.lowerBound : text.endIndex
                if let name = start.output[1].substring { functions[String(name)] = text[start.range.lowerBound..<end] }
            }
        }
        let registration = try Regex(#"admin\.(get|post|put|patch|delete)\("([^"]*)""#)
        let endpoint = try Regex(#"endpoints\.(\w+)[()]"#)
        let capture = try Regex(#":(\w+)"#)
        let query = try Regex(#"AdminJSON\.(?:int|text)\(\s*(?:call\.)?request, "(\w+)""#)
        let body = try Regex(#"AdminJSON\.body\(\s*(?:AdminAPI\.)?(.+?)\.self"#)
        let routes = try String(contentsOf: folder.appendingPathComponent("AdminRoutes.swift"), encoding: .utf8)
        let lines = routes.split(separator: "\n", omittingEmptySubsequences: false)
        var reads: [String: Reads] = [:]
        for (index, line) in lines.enumerated() {
            guard let route = line.firstMatch(of: registration), let method = route.output[1].substring,
                let path = route.output[2].substring
            else { continue }
            // The registration, to the next one: the endpoint it calls (none: answered in place).
            let block = ([line] + lines[(index + 1)...].prefix { !$0.contains("admin.") }).joined(separator: "\n")
            guard let called = block.firstMatch(of: endpoint)?.output[1].substring else { continue }
            let function = try #require(functions[String(called)], "\(called) is not in Admin*API.swift")
            let documented = path.replacing(capture) { "{\($0.output[1].substring ?? "")}" }
            reads["\(method.uppercased()) /\(documented)"] = Reads(
                query: Set(function.matches(of: query).compactMap { $0.output[1].substring.map(String.init) }),
                body: function.firstMatch(of: body)?.output[1].substring.map(String.init))
        }
        return reads
    }

    /// Parameters the session service checks, not the gateway (the stand-in
    /// does not): `AdminCommandHandlersTests` and test_admin.py hold them.
    static let checkedByTheSessionService: Set<String> = ["listSessions nick"]

    /// Every operation, asked as the document says (path values of the
    /// cluster's room, message and session, each body the schema's example,
    /// the parameters' examples), succeeds: a documented 2xx with its headers
    /// and a body of the documented schema. Removals run last, `logout` at the end.
    @Test func everyOperationAskedAsDocumentedSucceedsAsDocumented() async throws {
        let cluster = fixture.cluster
        let (room, session) = try await cluster.application.test(.router) { client in
            let (_, started, _) = try await cluster.json(client, .post, "/sessions", body: #"{"nick":"Lydia"}"#)
            let session = try #require(started["session"] as? String)
            let (_, created, _) = try await cluster.json(
                client, .post, "/rooms", session: session,
                body: #"{"latitude":52.5163,"longitude":13.3777,"zoom":12,"topic":"Tor"}"#)
            let room = try #require(created["id"] as? Int)
            let (said, _, _) = try await cluster.json(
                client, .post, "/rooms/\(room)/messages", session: session, body: #"{"text":"hello"}"#)
            #expect(said == .created)
            return (room, session)
        }
        let path = [
            "room": String(room), "message": "1", "session": session, "job": String(AdminStandIn.job),
            "kind": "nick", "value": "spammer",
        ]
        let order = spec.operations.sorted { a, b in
            func rank(_ operation: SpecDocument.Operation) -> (Int, Int) {
                (operation.id == "logout" ? 2 : operation.method == "DELETE" ? 1 : 0, -operation.path.count)
            }
            return rank(a) < rank(b)
        }
        var calls: [Call] = []
        for operation in order {
            let query = operation.parameters.compactMap { parameter -> (String, String)? in
                guard let name = parameter["name"] as? String, let value = parameter["example"] else { return nil }
                return (name, "\(value)")
            }
            calls.append(
                try call(
                    operation, path, query: query, authorization: needsToken(operation) ? .token : .none,
                    body: example(operation)))
        }
        let answers = try await send(calls)
        #expect(answers.count == spec.operations.count)
        for answer in answers {
            #expect((200..<300).contains(answer.status.code), "\(answer.call.what): \(answer.text)")
            #expect(undocumented(answer) == [], "\(answer.call.what)")
        }
        // The changes were audited, the operator's reason with them.
        let audited = fixture.standIn.auditLog
        #expect(audited.contains { $0.action == "remove-messages" && $0.detail.hasSuffix("reason: spam") })
        #expect(audited.contains { $0.action == "end-session" && $0.detail.hasSuffix("reason: spam") })
        #expect(audited.contains { $0.action == "remove-room" && $0.detail.hasSuffix("reason: spam") })
    }

    // MARK: The models

    /// Each answer's model, encoded as `AdminJSON` encodes it, has the
    /// documented schema's properties and types: whole (every optional field
    /// set) exactly, and sparse (each left out as the API may) with every
    /// `required` property, the left-out ones being exactly the others.
    @Test func theResponseModelsEncodeAsDocumented() throws {
        let room = AdminRoom(
            id: 7, topic: "Tor", x: 0.25, y: 0.75, z: 12, lobby: false, createdAtMs: 1, lastVisitedAtMs: 2,
            members: 3, messages: 4, participants: ["Lydia"])
        var listed = room
        listed.participants = nil
        let message = ChatMessage(room: 7, id: 3, nick: "Lydia", text: "hello", addedAt: 1_700_000_000_000)
        let report = ExpiryJobReport(
            id: 41, trigger: "admin:alice", dryRun: true, status: .failed, idleBeforeMs: 1, startedAtMs: 2,
            finishedAtMs: 3, selected: 4, examined: 4, removed: 0, failed: 4, rooms: [7], error: "rooms unavailable")
        let running = ExpiryJobReport(
            id: 42, trigger: "schedule", dryRun: false, status: .running, idleBeforeMs: 1, startedAtMs: 2)
        let session = AdminAPI.SessionView(
            AdminSession(id: SessionID.random().value, nick: "Lydia", createdAtMs: 1, lastSeenAtMs: 2), banned: true)
        let ban = Ban(
            target: try #require(BanTarget.nick("spammer")), active: true, reason: "spam", by: "alice", atMs: 1,
            version: 2)
        let stored = SettingsCatalog.all.map {
            SettingValue(name: $0.name.rawValue, value: $0.defaultValue, version: 1, updatedBy: "alice", updatedAtMs: 1)
        }
        let setting = AdminAPI.SettingView(SettingsCatalog.all[0], stored: stored[0])
        let entry = AuditEntry(
            id: 9, atMs: 1, actor: "alice", action: "ban", target: "nick spammer", outcome: "ok", detail: "spam",
            gateway: "gateway-1", source: "127.0.0.1")
        var unsourced = entry
        unsourced.source = nil
        let place = RoomInfo(
            id: 7, position: try #require(MercatorPoint(x: 0.25, y: 0.75)), zoom: ZoomLevel(12)!, topic: "Tor")
        let whole: [(String, any Encodable)] =
            [
                ("AdminLogin", AdminLogin(token: BearerToken.generate(), name: "alice", expiresAtMs: 1)),
                ("LogoutResponse", AdminAPI.LogoutResponse()), ("AdminRoom", room),
                ("RoomsResponse", AdminAPI.RoomsResponse(rooms: [room])),
                ("RoomResponse", AdminAPI.RoomResponse(room: room)), ("ChatMessage", message.tombstone),
                ("TranscriptResponse", AdminAPI.TranscriptResponse(room: 7, messages: [message.tombstone], next: 3)),
                ("ChangedRoomResponse", AdminAPI.ChangedRoomResponse(place)),
                ("RemovedResponse", AdminAPI.RemovedResponse(removed: 7)), ("MessageKey", MessageKey(room: 7, id: 3)),
                ("MessagesRemovedResponse", AdminAPI.MessagesRemovedResponse(removed: 2000, more: true)),
                ("ExpiryJobReport", report), ("JobResponse", AdminAPI.JobResponse(job: report)),
                ("JobsResponse", AdminAPI.JobsResponse(jobs: [report])),
                ("RunUnderWayResponse", AdminAPI.RunUnderWayResponse(job: report)), ("SessionView", session),
                ("SessionsResponse", AdminAPI.SessionsResponse(sessions: [session])),
                (
                    "SessionChangedResponse",
                    AdminAPI.SessionChangedResponse(
                        SessionInfo(id: .random(), nick: "Visitor", version: 2, ended: true))
                ),
                ("BanTarget", ban.target), ("Ban", ban), ("BanResponse", AdminAPI.BanResponse(ban: ban)),
                ("BansResponse", AdminAPI.BansResponse(bans: [ban])), ("SettingView", setting),
                ("SettingsResponse", AdminAPI.SettingsResponse(stored: stored)), ("AuditEntry", entry),
                ("AuditResponse", AdminAPI.AuditResponse(entries: [entry], next: 8)),
            ] + Self.errorCodes.sorted().map { ("ErrorResponse", AdminAPI.ErrorResponse(code: $0, message: "why")) }
        let sparse: [(String, any Encodable)] = [
            ("AdminRoom", listed), ("RoomsResponse", AdminAPI.RoomsResponse(rooms: [listed])), ("ChatMessage", message),
            ("TranscriptResponse", AdminAPI.TranscriptResponse(room: 7, messages: [message], next: nil)),
            ("ExpiryJobReport", running), ("JobsResponse", AdminAPI.JobsResponse(jobs: [running])),
            ("SettingView", AdminAPI.SettingView(SettingsCatalog.all[0], stored: nil)),
            ("SettingsResponse", AdminAPI.SettingsResponse(stored: [])), ("AuditEntry", unsourced),
            ("AuditResponse", AdminAPI.AuditResponse(entries: [unsourced], next: nil)),
        ]
        for (name, sample) in whole {
            let json = try Self.encode(sample)
            #expect(spec.mismatches(json, spec.schema(name), at: name) == [], "\(name)")
        }
        for (name, sample) in sparse {
            let json = try Self.encode(sample)
            let schema = spec.schema(name)
            let problems = spec.mismatches(json, schema, at: name).filter { !$0.hasSuffix("documented, not encoded") }
            #expect(problems == [], "\(name), sparse")
            guard case .object(let members) = json else { continue }
            let properties = Set(spec.object(schema["properties"]).keys)
            let required = Set(schema["required"] as? [String] ?? [])
            #expect(properties.subtracting(members.keys) == properties.subtracting(required), "\(name): required")
        }
        // Each schema with optional properties has a sparse sample.
        let responses = Set(whole.map(\.0))
        let optional = responses.filter { name in
            let schema = spec.schema(name)
            return !Set(spec.object(schema["properties"]).keys).subtracting(schema["required"] as? [String] ?? [])
                .isEmpty
        }
        #expect(optional.subtracting(sparse.map(\.0)).sorted() == [], "no sparse sample")
        // Every documented object schema is an answer or a request body checked here.
        let requests = Set(Self.requestBodies.map(\.schema) + ["SettingsChange"])
        let objects = spec.schemaNames.filter { spec.schema($0)["type"] as? String == "object" }
        #expect(Set(objects).subtracting(responses).subtracting(requests).sorted() == [], "schemas no model checks")
    }

    /// The error codes an answer can carry (`AdminFailure`): its own, the
    /// body's, and each service refusal's as `AdminFailure(_:)` maps it. The
    /// document's enum is exactly these.
    static let errorCodes: Set<String> = Set(
        [
            AdminFailure.unauthorized("").code, AdminFailure.badRequest("").code, AdminFailure.notFound("").code,
            AdminFailure.tooManyLogins().code,
            // `AdminJSON.body`: too large, too slow.
            "too_large", "timeout",
        ] + ProtocolError.Code.allCases.map { AdminFailure(ProtocolError($0, "")).code })

    @Test func theErrorCodesAndSettingsAreTheCodes() throws {
        let error = spec.object(spec.object(spec.schema("ErrorResponse")["properties"])["error"])
        let code = spec.object(spec.object(error["properties"])["code"])
        #expect(Set(code["enum"] as? [String] ?? []) == Self.errorCodes)
        // The settings: their names, and the ranges a change may give them.
        let view = spec.object(spec.object(spec.schema("SettingView")["properties"])["name"])
        #expect(view["enum"] as? [String] == SettingsCatalog.all.map(\.name.rawValue))
        let change = spec.schema("SettingsChange")
        #expect(change["additionalProperties"] as? Bool == false)
        let ranges = spec.object(change["properties"]).mapValues { property -> ClosedRange<Int>? in
            let schema = spec.object(property)
            guard schema["type"] as? String == "integer", let low = schema["minimum"] as? Int,
                let high = schema["maximum"] as? Int
            else { return nil }
            return low...high
        }
        #expect(ranges == Dictionary(uniqueKeysWithValues: SettingsCatalog.all.map { ($0.name.rawValue, $0.range) }))
        let example = try #require((change["examples"] as? [[String: Int]])?.first)
        #expect(throws: Never.self) { try SettingsCatalog.validate(example) }
    }

    static let requestBodies: [(schema: String, decode: @Sendable (Data) throws -> Any)] = [
        ("LoginRequest", { try JSONDecoder().decode(AdminAPI.LoginRequest.self, from: $0) }),
        ("ChangeRoomRequest", { try JSONDecoder().decode(AdminAPI.ChangeRoomRequest.self, from: $0) }),
        ("RemoveMessagesRequest", { try JSONDecoder().decode(AdminAPI.RemoveMessagesRequest.self, from: $0) }),
        ("ExpiryRunRequest", { try JSONDecoder().decode(AdminAPI.ExpiryRunRequest.self, from: $0) }),
        ("RenameSessionRequest", { try JSONDecoder().decode(AdminAPI.RenameSessionRequest.self, from: $0) }),
        ("BanRequest", { try JSONDecoder().decode(AdminAPI.BanRequest.self, from: $0) }),
    ]

    /// Each request body model reads every documented property, and no other.
    @Test func theRequestModelsReadWhatIsDocumented() throws {
        for (name, decode) in Self.requestBodies {
            let schema = spec.schema(name)
            let model = try decode(try JSONSerialization.data(withJSONObject: full(schema)))
            let fields = Mirror(reflecting: model).children
            #expect(Set(fields.compactMap(\.label)) == Set(spec.object(schema["properties"]).keys), "\(name)")
            for field in fields {
                let value = Mirror(reflecting: field.value)
                let unset = value.displayStyle == .optional && value.children.isEmpty
                #expect(!unset, "\(name): \(type(of: model)).\(field.label ?? "?") is not read from the body")
            }
        }
        // Each operation's body is one of them, or the settings (checked in `theErrorCodesAndSettingsAreTheCodes`).
        let bodies = Set(spec.operations.compactMap { ($0.requestSchema as? [String: Any])?["$ref"] as? String })
        let checked = (Self.requestBodies.map(\.schema) + ["SettingsChange"]).map { "#/components/schemas/" + $0 }
        #expect(bodies == Set(checked))
        #expect(spec.operations.filter { $0.requestSchema != nil }.count >= bodies.count)
    }

    // MARK: Asking the listener

    /// One request: to the documented operation `operation` (`METHOD /path`).
    struct Call: Sendable {
        enum Authorization: Sendable {
            case none, token
            case header(String)
        }
        let operation: String
        let method: HTTPRequest.Method
        let uri: String
        let authorization: Authorization
        let body: [UInt8]?
        /// A `400` is what the document says it gets.
        let refused: Bool
        let what: String
    }

    struct Answer: Sendable {
        let call: Call
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Path values for the probes: a room, message and job that do not exist, a well-formed session id.
    static let probePath = [
        "room": "999", "message": "1", "job": "1", "session": "n7fheb2lk5pv8d873a32tg92k3", "kind": "nick",
        "value": "spammer",
    ]

    static func key(_ operation: SpecDocument.Operation) -> String { "\(operation.method) \(operation.path)" }

    func call(
        _ operation: SpecDocument.Operation, _ path: [String: String], query: [(String, String)] = [],
        authorization: Call.Authorization = .token, body: [UInt8]? = nil, refused: Bool = false, what: String = ""
    ) -> Call {
        let filled = path.reduce(operation.path) { $0.replacingOccurrences(of: "{\($1.key)}", with: $1.value) }
        let query = query.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        return Call(
            operation: Self.key(operation), method: HTTPRequest.Method(rawValue: operation.method)!,
            uri: fixture.base + filled + (query.isEmpty ? "" : "?" + query), authorization: authorization,
            body: body, refused: refused, what: "\(operation.id) \(what)")
    }

    /// Sends the calls in turn to the operators' listener, `alice` logged in.
    func send(_ calls: [Call]) async throws -> [Answer] {
        let fixture = self.fixture
        return try await fixture.application.test(.router) { client in
            let token = try await fixture.login(client)
            var answers: [Answer] = []
            for call in calls {
                var headers = HTTPFields()
                switch call.authorization {
                case .none: break
                case .token: headers[.authorization] = "Bearer " + token
                case .header(let value): headers[.authorization] = value
                }
                if call.body != nil { headers[.contentType] = "application/json" }
                answers.append(
                    try await client.execute(
                        uri: call.uri, method: call.method, headers: headers,
                        body: call.body.map { ByteBuffer(bytes: $0) }
                    ) { Answer(call: call, status: $0.status, headers: $0.headers, body: Array(buffer: $0.body)) })
            }
            return answers
        }
    }

    // MARK: Reading the document

    /// The operation's object in the document.
    func object(_ operation: SpecDocument.Operation) -> [String: Any] {
        spec.object(spec.object(spec.object(spec.root["paths"])[operation.path])[operation.method.lowercased()])
    }

    /// Whether the operation's security (or the document's) asks for the token.
    func needsToken(_ operation: SpecDocument.Operation) -> Bool {
        !((object(operation)["security"] ?? spec.root["security"]) as? [Any] ?? []).isEmpty
    }

    /// The request body: its schema's first example.
    func example(_ operation: SpecDocument.Operation) throws -> [UInt8]? {
        guard let schema = operation.requestSchema else { return nil }
        let example = try #require((spec.object(schema)["examples"] as? [Any])?.first, "\(operation.id): no example")
        return Array(try JSONSerialization.data(withJSONObject: example))
    }

    /// An object with every property of the schema, nested ones too, each a value of its type.
    func full(_ schema: Any?) throws -> Any {
        let schema = spec.object(schema)
        switch schema["type"] as? String {
        case "object": return try spec.object(schema["properties"]).mapValues { try full($0) }
        case "integer": return max(schema["minimum"] as? Int ?? 3, 1)
        case "number": return 0.5
        case "string": return "Abc"
        case "boolean": return true
        case "array": return [Any]()
        default: throw SpecDocument.Invalid(description: "no example for \(schema)")
        }
    }

    /// How the answer differs from what the document says its operation answers:
    /// an undocumented status, a documented header missing, another content
    /// type, or a body not of the schema.
    func undocumented(_ answer: Answer) -> [String] {
        guard let operation = spec.operations.first(where: { Self.key($0) == answer.call.operation }) else {
            return ["\(answer.call.operation) is not documented"]
        }
        let what = "\(answer.call.what) \(answer.status.code)"
        guard let documented = spec.object(object(operation)["responses"])[String(answer.status.code)] else {
            return ["\(what) is not a documented status: \(answer.text)"]
        }
        let response = spec.object(documented)
        var problems = spec.object(response["headers"]).keys.sorted()
            .filter { answer.headers[.init($0)!] == nil }.map { "\(what) lacks \($0)" }
        guard let content = spec.object(response["content"]).first else {
            return problems + (answer.body.isEmpty ? [] : ["\(what) has a body, none documented"])
        }
        let (type, media) = (content.key, content.value)
        if answer.headers[.contentType]?.hasPrefix(type) != true {
            problems.append("\(what) is \(answer.headers[.contentType] ?? "untyped"), documented \(type)")
        }
        guard let json = try? JSONDecoder().decode(JSONValue.self, from: Data(answer.body)) else {
            return problems + ["\(what): not JSON: \(answer.text)"]
        }
        let schema = spec.object(spec.object(media)["schema"])
        guard schema["properties"] != nil else {
            // A free-form object (this document).
            if case .object = json { return problems }
            return problems + ["\(what): not an object"]
        }
        // A live answer leaves optional properties out; `required` ones must be there.
        return problems
            + spec.mismatches(json, schema, at: what).filter { !$0.hasSuffix("documented, not encoded") }
    }

    /// Values `schema` refuses, as a query or path spells them (a path segment cannot be empty).
    static func badValues(_ schema: [String: Any], inPath: Bool) -> [String] {
        var values: [String] = []
        switch schema["type"] as? String {
        case "integer":
            values.append("x")
            if let minimum = schema["minimum"] as? Int { values.append(String(minimum - 1)) }
            if let maximum = schema["maximum"] as? Int { values.append(String(maximum + 1)) }
        case "string":
            if schema["enum"] != nil { values.append("bogus") }
            if let most = schema["maxLength"] as? Int { values.append(String(repeating: "a", count: most + 1)) }
            if let least = schema["minLength"] as? Int, least > 0, !inPath { values.append("") }
        default: break
        }
        return values
    }

    /// Values at the bounds `schema` documents (its minimum, maximum, longest), which it accepts.
    static func boundValues(_ schema: [String: Any]) -> [String] {
        switch schema["type"] as? String {
        case "integer": [schema["minimum"], schema["maximum"]].compactMap { ($0 as? Int).map(String.init) }
        case "string": (schema["maxLength"] as? Int).map { [String(repeating: "a", count: $0)] } ?? []
        default: []
        }
    }

    static func encode(_ sample: any Encodable) throws -> JSONValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]  // as `AdminJSON.response`
        return try JSONDecoder().decode(JSONValue.self, from: encoder.encode(sample))
    }
}
