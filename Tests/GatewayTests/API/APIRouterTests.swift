import Foundation
import GeoChatDomain
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import Gateway
@testable import GatewayCore

/// The JSON API through the router, over the in-memory cluster of `GatewayRouterTests`.
extension GatewayRouterTests {
    func json(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ path: String, session: String? = nil,
        body: String? = nil
    ) async throws -> (HTTPResponse.Status, [String: Any], String?) {
        var headers: HTTPFields = [:]
        if let session { headers[.authorization] = "Bearer " + session }
        if body != nil { headers[.contentType] = "application/json" }
        return try await client.execute(
            uri: "/api/v1" + path, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
        ) { response in
            let object = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [String: Any] ?? [:]
            return (response.status, object, response.headers[.contentType])
        }
    }

    @Test func anAppStartsCreatesFindsSaysAndReadsInJSON() async throws {
        try await application.test(.router) { client in
            let (started, session, _) = try await json(client, .post, "/sessions", body: #"{"nick":"Lydia"}"#)
            #expect(started == .created)
            let id = try #require(session["session"] as? String)

            let (created, room, _) = try await json(
                client, .post, "/rooms", session: id,
                body: #"{"latitude":52.5163,"longitude":13.3777,"zoom":12,"topic":"Tor"}"#)
            #expect(created == .created)
            let roomID = try #require(room["id"] as? Int)
            #expect(room["latitude"] as? Double == 52.5163 && room["longitude"] as? Double == 13.3777)

            let (_, box, _) = try await json(
                client, .get, "/rooms?south=52&west=13&north=53&east=14&minZoom=10&maxZoom=14")
            #expect(((box["rooms"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? Int } == [roomID])

            let (_, one, _) = try await json(client, .get, "/rooms/\(roomID)")
            #expect(one["topic"] as? String == "Tor")

            let (said, message, _) = try await json(
                client, .post, "/rooms/\(roomID)/messages", session: id, body: #"{"text":"hello <b>"}"#)
            #expect(said == .created)
            #expect(message["text"] as? String == "hello <b>")
            let (_, page, _) = try await json(client, .get, "/rooms/\(roomID)/messages?after=0")
            #expect(((page["messages"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? Int } == [1])
            let (_, transcript, _) = try await json(client, .get, "/rooms/\(roomID)/transcript")
            #expect((transcript["messages"] as? [Any])?.count == 1)
            #expect(transcript["next"] is NSNull)

            let (renamed, again, _) = try await json(client, .patch, "/session", session: id, body: #"{"nick":"Lyd"}"#)
            #expect(renamed == .ok && again["nick"] as? String == "Lyd")
            let (ended, _, _) = try await json(client, .delete, "/session", session: id)
            #expect(ended == .noContent)
            let (afterEnd, problem, type) = try await json(client, .post, "/rooms/\(roomID)/join", session: id)
            #expect(afterEnd == .unauthorized && problem["code"] as? String == "invalid_session")
            #expect(type == "application/problem+json")
        }
    }

    @Test func badInputGetsAProblemDocumentAndChangesNothing() async throws {
        try await application.test(.router) { client in
            let cases: [(HTTPRequest.Method, String, String?, HTTPResponse.Status, String)] = [
                (.post, "/sessions", #"{"nick":"1bad"}"#, .badRequest, "invalid_nick"),
                (.post, "/sessions", #"{"nick":5}"#, .badRequest, "bad_param"),
                (.post, "/sessions", "not json", .badRequest, "bad_param"),
                (.post, "/sessions", nil, .badRequest, "missing_param"),
                (.get, "/rooms?south=52&west=13&north=51&east=14", nil, .badRequest, "bad_param"),
                (.get, "/rooms?south=52&west=14&north=53&east=13", nil, .badRequest, "bad_param"),
                (.get, "/rooms?south=nan&west=13&north=53&east=14", nil, .badRequest, "bad_param"),
                (.get, "/rooms/nearest?latitude=89&longitude=0", nil, .badRequest, "bad_param"),
                (.get, "/rooms/nearest?latitude=0&longitude=0&radius=-1", nil, .badRequest, "bad_param"),
                (.get, "/rooms/nearest?latitude=0&longitude=0&direction=10", nil, .badRequest, "missing_param"),
                (
                    .get, "/rooms/nearest?latitude=0&longitude=0&semiMajor=10&semiMinor=20", nil, .badRequest,
                    "bad_param"
                ),
                (.get, "/rooms/abc", nil, .badRequest, "bad_param"),
                (.get, "/rooms/999", nil, .notFound, "no_such_chat"),
                (.get, "/rooms/999/messages", nil, .notFound, "no_such_chat"),
                (.get, "/rooms/1/messages?wait=26", nil, .badRequest, "bad_param"),
                (.get, "/rooms/999/events", nil, .notFound, "no_such_chat"),
                (.get, "/rooms/999/events?after=-1", nil, .badRequest, "bad_param"),
                (
                    .post, "/rooms", #"{"latitude":1,"longitude":2,"zoom":3,"topic":"t"}"#, .unauthorized,
                    "invalid_session"
                ),
                (.get, "/nothing/here", nil, .notFound, "unknown_command"),
            ]
            for (method, path, body, status, code) in cases {
                let (answered, problem, type) = try await json(client, method, path, body: body)
                #expect(answered == status, "\(method) \(path)")
                #expect(problem["code"] as? String == code, "\(method) \(path): \(problem)")
                #expect(problem["status"] as? Int == Int(status.code))
                #expect(type == "application/problem+json", "\(path)")
            }
        }
    }
}
