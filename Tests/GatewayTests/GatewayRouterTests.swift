import Foundation
import GeoChatBus
import GeoChatDomain
import GeoChatRuntime
import GeoChatTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import Gateway
@testable import GatewayCore
@testable import MessagingService
@testable import RoomsService
@testable import SessionService

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The gateway as phones see it, through its router (`app.test(.router)`),
/// over an in-memory cluster: the session, rooms and messaging services' real
/// command handlers on in-memory stores, reached through the in-memory bus.
@Suite struct GatewayRouterTests {
    let gateway: Gateway
    /// What the services published (in place of Kafka's event topics).
    let published: RecordedEvents

    init() throws { try self.init(overriding: [:]) }

    /// `overriding`: settings to change from the test cluster's (every rate limit off).
    init(overriding: [String: String]) throws {
        let logger = Logger(label: "router-test")
        let bus = InMemoryCommandBus()
        let events = RecordedEvents()
        published = events
        let sessionStore = InMemorySessionStore()
        let roomStore = InMemoryRoomStore()
        let keys = AdminKeys(login: TestKeys.loginSeal(), operatorCommands: TestKeys.operatorSeal())
        bus.register(
            SessionCommandHandlers(
                store: sessionStore, outbox: OutboxRelay(outbox: sessionStore.outbox, events: events, logger: logger),
                logger: logger
            ).handlers)
        bus.register(
            RoomCommandHandlers(
                store: roomStore, outbox: OutboxRelay(outbox: roomStore.outbox, events: events, logger: logger),
                operatorSeal: keys.operatorCommands, logger: logger
            ).handlers)
        let messageStore = InMemoryMessageStore()
        bus.register(
            MessagingCommandHandlers(
                store: messageStore, bus: bus,
                outbox: OutboxRelay(outbox: MessageOutbox(store: messageStore), events: events, logger: logger),
                operatorSeal: keys.operatorCommands, logger: logger
            ).handlers)
        let environment = [
            "GEOCHAT_RATE_POST_PER_S": "0", "GEOCHAT_RATE_POST_ADDRESS_PER_S": "0",
            "GEOCHAT_RATE_POST_MIN_INTERVAL_MS": "0",
            "GEOCHAT_RATE_CREATE_PER_S": "0", "GEOCHAT_RATE_CREATE_ADDRESS_PER_S": "0",
            "GEOCHAT_RATE_START_ADDRESS_PER_S": "0", "GEOCHAT_RATE_ROOMS_PER_HOUR": "0",
            "GEOCHAT_PATH_PREFIX": "/geochat",
            "GEOCHAT_RATE_CHANGE_PER_S": "0", "GEOCHAT_RATE_HISTORY_ADDRESS_PER_S": "0",
            "GEOCHAT_RATE_WIDE_REGION_ADDRESS_PER_S": "0", "GEOCHAT_RATE_CHANGE_ADDRESS_PER_S": "0",
            "GEOCHAT_RATE_PARTICIPANTS_ADDRESS_PER_S": "0",
            // Generous: a unit test on a busy machine must not fail on time.
            "GEOCHAT_REQUEST_TIMEOUT_MS": "30000",
        ]
        let settings = try GatewaySettings(
            Configuration(arguments: [], environment: environment.merging(overriding) { _, given in given }))
        gateway = Gateway(instance: "gateway-test", settings: settings, bus: bus, adminKeys: keys, logger: logger)
    }

    var application: some ApplicationProtocol {
        gateway.buildApplication(
            health: HealthRoutes(isReady: { true }) {
                ServiceStatus(service: "gateway", instance: "gateway-test", ready: true, assignments: [])
            }, host: "127.0.0.1", port: 0)
    }

    /// The text of the one element named `tag`, or of its attribute.
    static func value(_ xml: String, _ tag: String, attribute: String? = nil) -> String? {
        guard let document = try? XMLDocument(xmlString: xml),
            let node = try? document.nodes(forXPath: "//\(tag)").first
        else { return nil }
        if let attribute { return (node as? XMLElement)?.attribute(forName: attribute)?.stringValue }
        return node.stringValue
    }

    func get(_ client: some TestClientProtocol, _ query: String) async throws -> (HTTPResponse.Status, String) {
        try await client.execute(uri: "/geochat/chat.php?" + query, method: .get) { response in
            #expect(response.headers[.contentType] == "text/xml; charset=utf-8")
            return (response.status, String(buffer: response.body))
        }
    }

    @Test func aPhoneStartsCreatesJoinsSaysAndReadsBack() async throws {
        try await application.test(.router) { client in
            let (status, started) = try await get(client, "v=5&cmd=start&nick=Lydia")
            #expect(status == .ok)
            let session = try #require(Self.value(started, "sessionid"))
            #expect(SessionID(session) != nil)

            let (_, created) = try await get(
                client, "v=5&cmd=create&sessionid=\(session)&lon=0.25&lat=0.5&z=9&topic=Harbour%20%26%20Pier")
            let room = try #require(Self.value(created, "chat/id"))
            #expect(Self.value(created, "chat/topic") == "Harbour & Pier")

            let (_, rooms) = try await get(client, "v=5&cmd=chats&lon1=0.2&lat1=0.4&lon2=0.3&lat2=0.6&minz=6&maxz=12")
            #expect(Self.value(rooms, "chat/id") == room)
            let (_, elsewhere) = try await get(
                client, "v=5&cmd=chats&lon1=0.6&lat1=0.4&lon2=0.7&lat2=0.6&minz=6&maxz=12")
            #expect(Self.value(elsewhere, "chat/id") == nil)

            let (_, joined) = try await get(client, "v=5&cmd=join&sessionid=\(session)&chatid=\(room)")
            #expect(joined.contains("<success"))
            let (_, said) = try await get(client, "v=5&cmd=say&sessionid=\(session)&chatid=\(room)&msg=hello%20%3C%3E")
            #expect(Self.value(said, "success", attribute: "id") == "1")

            let (_, polled) = try await get(client, "v=5&cmd=messages&chatid=\(room)&past=0&sessionid=\(session)")
            #expect(Self.value(polled, "message", attribute: "id") == "1")
            #expect(polled.contains("hello &lt;&gt;"), "the text is escaped")

            let (_, present) = try await get(client, "v=5&cmd=participants&chatid=\(room)")
            #expect(Self.value(present, "participants/user") == "Lydia")
        }
    }

    @Test func badRequestsGetTheContractsErrors() async throws {
        try await application.test(.router) { client in
            let cases: [(String, HTTPResponse.Status, String)] = [
                ("v=5&cmd=start&nick=1bad", .badRequest, "invalid_nick"),
                ("v=5&cmd=dance", .badRequest, "unknown_command"),
                ("v=4&cmd=start&nick=Ann", .badRequest, "unsupported_version"),
                ("v=5&cmd=say&chatid=1&msg=hi", .badRequest, "missing_param"),
                ("v=5&cmd=say&sessionid=n7fheb2lk5pv8d873a32tg92k3&chatid=1&msg=hi", .forbidden, "invalid_session"),
                ("v=5&cmd=messages&chatid=999&past=0", .notFound, "no_such_chat"),
            ]
            for (query, status, code) in cases {
                let (answered, body) = try await get(client, query)
                #expect(answered == status, "\(query)")
                #expect(Self.value(body, "error", attribute: "code") == code, "\(query): \(body)")
            }
        }
    }

    @Test func theLobbyDialectPostsAndReads() async throws {
        try await application.test(.router) { client in
            try await client.execute(uri: "/geochat/add.php?user=Ann&message=hi%20all", method: .get) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/geochat/messages.php?past=0", method: .get) { response in
                let body = String(buffer: response.body)
                #expect(body.contains("hi all"), "\(body)")
            }
        }
    }

    var health: HealthRoutes {
        HealthRoutes(
            isReady: { true },
            status: { ServiceStatus(service: "gateway", instance: "gateway-test", ready: true, assignments: []) })
    }

    @Test func thePublicListenerServesOnlyTheProtocolAndTheProbes() async throws {
        try await application.test(.router) { client in
            try await client.execute(uri: "/ready", method: .get) { response in #expect(response.status == .ok) }
            for path in ["/geochat/admin/rooms", "/geochat/admin/login", "/status", "/metrics"] {
                try await client.execute(uri: path, method: .get) { response in
                    #expect(response.status == .notFound, "\(path)")
                }
            }
        }
    }

    @Test func theOperatorsListenerHasTheAdminAPIStatusAndMetrics() async throws {
        try await gateway.buildAdminApplication(health: health, port: 0).test(.router) { client in
            try await client.execute(uri: "/geochat/admin/rooms", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            }
            try await client.execute(uri: "/status", method: .get) { response in #expect(response.status == .ok) }
            try await client.execute(uri: "/metrics", method: .get) { response in #expect(response.status == .ok) }
            try await client.execute(uri: "/geochat/chat.php?v=5&cmd=start&nick=Ann", method: .get) { response in
                #expect(response.status == .notFound, "the phones' protocol is not served there")
            }
        }
    }

    /// Every answer of both listeners, the router's own 404 included, says
    /// what browsers must not do with it (issue 26, item 6).
    @Test func everyAnswerCarriesTheBrowserHardeningHeaders() async throws {
        @Sendable func check(_ response: TestResponse, _ what: String) {
            #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(what)")
            #expect(response.headers[.referrerPolicy] == "no-referrer", "\(what)")
            #expect(response.headers[.xFrameOptions] == "DENY", "\(what)")
            let policy = response.headers[.contentSecurityPolicy] ?? ""
            #expect(policy.contains("default-src 'self'") && policy.contains("frame-ancestors 'none'"), "\(what)")
            #expect(
                policy.contains("script-src 'self'") && !policy.contains("script-src 'self' 'unsafe-inline'"), "\(what)"
            )
        }
        try await application.test(.router) { client in
            for uri in [
                "/ready", "/geochat/chat.php?cmd=start&nick=Ann", "/geochat/chat.php?cmd=bogus", "/api/v1/rooms/1",
                "/no/such/path",
            ] {
                try await client.execute(uri: uri, method: .get) { response in check(response, uri) }
            }
        }
        try await gateway.buildAdminApplication(health: health, port: 0).test(.router) { client in
            try await client.execute(uri: "/geochat/admin/rooms", method: .get) { response in check(response, "admin") }
        }
    }

    /// The web route serves what the page loads, not the rest of its folder.
    @Test func theWebMapServesOnlyThePagesAssets() {
        for name in ["index.html", "app.js", "app.css", "world.geojson", "images/marker-icon.png"] {
            #expect(StaticFiles.isPageAsset(name) && WebMapRoutes.isMapFile(name), "\(name)")
        }
        for name in ["README.md", "tools/make_world_geojson.py", "tools/screenshot.py", "app", "notes.txt", "a.html"] {
            #expect(!StaticFiles.isPageAsset(name), "\(name)")
        }
        // The admin page's files are the operators' listener's only.
        for name in ["admin/admin.js", "admin/client.js", "admin/admin.css"] {
            #expect(StaticFiles.isPageAsset(name) && !WebMapRoutes.isMapFile(name), "\(name)")
        }
    }

    /// An internet-facing gateway with the admin API off serves `/status` and
    /// `/metrics` on its operators' listener, and no admin path (and needs no seal key).
    @Test func withTheAdminAPIOffTheOperatorsListenerServesNoAdminPath() async throws {
        let settings = try GatewaySettings(
            Configuration(arguments: [], environment: ["GEOCHAT_ADMIN_API": "off", "GEOCHAT_PATH_PREFIX": "/geochat"]))
        #expect(!settings.adminAPI)
        let publicOnly = Gateway(
            instance: "gateway-public", settings: settings, bus: InMemoryCommandBus(), adminKeys: nil,
            logger: Logger(label: "router-test"))
        try await publicOnly.buildAdminApplication(health: health, port: 0).test(.router) { client in
            for path in ["/geochat/admin/login", "/geochat/admin/rooms"] {
                try await client.execute(uri: path, method: .post) { response in
                    #expect(response.status == .notFound, "\(path)")
                }
            }
            try await client.execute(uri: "/status", method: .get) { response in #expect(response.status == .ok) }
            try await client.execute(uri: "/metrics", method: .get) { response in #expect(response.status == .ok) }
        }
        #expect(throws: ConfigurationError.self) {
            try GatewaySettings(Configuration(arguments: [], environment: ["GEOCHAT_ADMIN_API": "maybe"]))
        }
    }
}
