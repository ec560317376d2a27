import GatewayCore
import GeoChatDomain
import HTTPTypes
import Hummingbird
import NIOCore

/// One page of a room's transcript, as `text/plain` (one line a message,
/// `Transcript.line`) or JSON; the next page is named by `next` (JSON) or a
/// `Link: <…>; rel="next"` header (text).
struct TranscriptPage {
    let room: RoomID
    let after: MessageID
    let limit: Int
    let asText: Bool

    static let defaultLimit = Limits.maxMessageLimit
    static let link = HTTPField.Name("Link")!

    init(room: RoomID, parameters: APIParameters, accept: String?) throws(ProtocolError) {
        self.room = room
        after = try parameters.messageID("after")
        limit = try parameters.integer("limit", in: 1...Limits.maxMessageLimit) ?? Self.defaultLimit
        if parameters.has("format") {
            let format = try parameters.choice("format", of: ["text", "json"])
            asText = format == "text"
        } else {
            // `Accept: text/plain` asks for text; anything else gets JSON.
            asText = accept.map { $0.contains("text/plain") && !$0.contains("application/json") } ?? false
        }
    }

    func response(_ messages: [ChatMessage]) -> Response {
        let next = messages.count == limit ? messages.last?.id : nil
        guard asText else {
            return APIJSON.response(
                APIModels.Transcript(room: room, messages: messages.map(APIModels.Message.init), next: next))
        }
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8"]
        if let next {
            headers[Self.link] =
                "<\(APIRoutes.base)/rooms/\(room)/transcript?format=text&after=\(next)&limit=\(limit)>; rel=\"next\""
        }
        let text = messages.map { Transcript.line($0) }.joined()
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
