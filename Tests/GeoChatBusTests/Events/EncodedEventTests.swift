import GeoChatDomain
import Testing

@testable import GeoChatBus

/// An outbox's staged event, named as the answer to a request (the create's
/// `created` event): the envelope a reader decodes is the staged one plus
/// `answers`, whatever the request's correlation id holds.
@Suite struct EncodedEventTests {
    private static let room = RoomInfo(
        id: 42, position: MercatorPoint(x: 0.25, y: 0.75)!, zoom: ZoomLevel(9)!, topic: "Quay \"north\" \\ side")

    @Test(arguments: ["c-1", "quote \" and \\ backslash", "line\nbreak\ttab\u{1}\u{1f}", "ünïcødé ☃"])
    func aStagedEventNamesTheRequestItAnswers(correlationID: String) throws {
        let staged = try EncodedEvent(RoomEvent.created(Self.room), atMs: 1_700_000_000_000)
        let answering = try #require(staged.answering(correlationID))
        #expect(answering.topic == staged.topic && answering.key == staged.key)
        let envelope = try #require(EventDecoding.envelope(RoomEvent.self, from: Array(answering.value.utf8)))
        #expect(envelope.answers == correlationID)
        #expect(envelope.event == .created(Self.room))
        #expect(envelope.atMs == 1_700_000_000_000)
        // The staged record itself is unchanged: the outbox relays it as it was committed.
        #expect(EventDecoding.envelope(RoomEvent.self, from: Array(staged.value.utf8))?.answers == nil)
    }

    @Test func anEnvelopeThatNamesARequestAlreadyIsRenamedNotDoubled() throws {
        let earlier = try EncodedEvent(RoomEvent.created(Self.room), answers: "first")
        let answering = try #require(earlier.answering("second"))
        #expect(answering.value.components(separatedBy: "\"answers\"").count == 2)
        #expect(EventDecoding.envelope(RoomEvent.self, from: Array(answering.value.utf8))?.answers == "second")
    }

    @Test func aValueThatIsNoJSONObjectAnswersNothing() {
        #expect(EncodedEvent(topic: Topics.roomEvents, key: "1", value: "[1, 2]").answering("c") == nil)
        #expect(EncodedEvent(topic: Topics.roomEvents, key: "1", value: "not json").answering("c") == nil)
    }

    @Test func anEmptyObjectGetsTheNameAlone() throws {
        let answering = try #require(EncodedEvent(topic: Topics.roomEvents, key: "1", value: "{}").answering("c"))
        #expect(answering.value == "{\"answers\":\"c\"}")
    }
}
