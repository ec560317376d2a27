import HTTPTypes
import HummingbirdTesting
import Testing

@testable import Gateway

/// The write limits live in the core (`ChatActions` asks the request's
/// `ChatClient`), so they hold whichever surface a client speaks.
extension GatewayRouterTests {
    /// Two session starts per address, then none for a long while.
    static let twoStarts = ["GEOCHAT_RATE_START_ADDRESS_PER_S": "0.001", "GEOCHAT_RATE_START_ADDRESS_BURST": "2"]

    @Test func bothSurfacesDrawOnTheSameBucketsAndSayWhenToComeBack() async throws {
        try await GatewayRouterTests(overriding: Self.twoStarts).application.test(.router) { client in
            #expect(try await get(client, "v=5&cmd=start&nick=Ann").0 == .ok)
            #expect(try await json(client, .post, "/sessions", body: #"{"nick":"Bob"}"#).0 == .created)

            let retryAfter = try await client.execute(uri: "/geochat/chat.php?v=5&cmd=start&nick=Cy", method: .get) {
                response in
                #expect(response.status == .tooManyRequests)
                #expect(Self.value(String(buffer: response.body), "error", attribute: "code") == "rate_limited")
                return response.headers[HTTPField.Name("Retry-After")!].flatMap { Int($0) }
            }
            #expect(
                (retryAfter ?? 0) > 60,
                "the refusal's own wait, not the default second: \(String(describing: retryAfter))")

            let (status, problem, _) = try await json(client, .post, "/sessions", body: #"{"nick":"Dee"}"#)
            #expect(status == .tooManyRequests && problem["code"] as? String == "rate_limited")

            // Reads take no write tokens.
            for _ in 0..<200 {
                #expect(
                    try await get(client, "v=5&cmd=chats&lon1=0.2&lat1=0.4&lon2=0.3&lat2=0.6&minz=6&maxz=12").0 == .ok)
            }
        }
    }

    /// A join, a leave and a rename draw on one bucket per session, through either surface.
    @Test func joinsLeavesAndRenamesShareABucketPerSession() async throws {
        let limited = try GatewayRouterTests(overriding: [
            "GEOCHAT_RATE_CHANGE_PER_S": "0.001", "GEOCHAT_RATE_CHANGE_BURST": "3",
        ])
        try await limited.application.test(.router) { client in
            let session = try #require(Self.value(try await get(client, "v=5&cmd=start&nick=Ann").1, "sessionid"))
            let other = try #require(Self.value(try await get(client, "v=5&cmd=start&nick=Bob").1, "sessionid"))
            let created = try await get(client, "v=5&cmd=create&sessionid=\(session)&lon=0.25&lat=0.5&z=9&topic=Pier")
            let room = try #require(Self.value(created.1, "chat/id"))

            #expect(try await get(client, "v=5&cmd=join&sessionid=\(session)&chatid=\(room)").0 == .ok)
            #expect(try await get(client, "v=5&cmd=leave&sessionid=\(session)&chatid=\(room)").0 == .ok)
            #expect(try await json(client, .patch, "/session", session: session, body: #"{"nick":"Anna"}"#).0 == .ok)
            #expect(try await get(client, "v=5&cmd=join&sessionid=\(session)&chatid=\(room)").0 == .tooManyRequests)
            #expect(try await json(client, .post, "/rooms/\(room)/join", session: session).0 == .tooManyRequests)
            #expect(
                try await get(client, "v=5&cmd=join&sessionid=\(other)&chatid=\(room)").0 == .ok,
                "another session has its own")
        }
    }
}
