import GeoChatDomain
import Testing

@testable import GeoChatBus

/// A requester's reply topics: replaced after so many replies, a replaced one
/// deleted only once no request naming it still waits.
@Suite struct ReplyTopicsTests {
    @Test func aTopicIsReplacedAfterItsRepliesAndDeletedOnceDrained() {
        var topics = ReplyTopics(instance: "gateway-1", rotateAfter: 3)
        #expect(topics.current == "geochat.replies.gateway-1")
        let waiting = topics.hold()
        #expect(!topics.received(on: waiting))
        #expect(!topics.received(on: waiting))
        #expect(topics.received(on: waiting), "the third reply asks for the next topic")
        #expect(!topics.received(on: waiting), "once: a replacement is under way")
        #expect(topics.nextTopic == "geochat.replies.gateway-1.r1")
        #expect(topics.rotated(to: topics.nextTopic) == "geochat.replies.gateway-1")
        #expect(topics.current == "geochat.replies.gateway-1.r1")
        #expect(topics.hold() == "geochat.replies.gateway-1.r1", "new requests name the new topic")
        #expect(topics.drained().isEmpty, "a request still waits on the old one")
        topics.release(waiting)
        #expect(topics.drained() == ["geochat.replies.gateway-1"])
        topics.deleted("geochat.replies.gateway-1")
        #expect(topics.drained().isEmpty && topics.retired.isEmpty)
        #expect(!topics.received(on: "geochat.replies.gateway-1"), "a late reply on a replaced topic counts for nothing")
    }

    @Test func aFailedReplacementIsTriedAgainAndNoneWithoutALimit() {
        var topics = ReplyTopics(instance: "m", rotateAfter: 1)
        #expect(topics.received(on: topics.current))
        topics.rotationFailed()
        #expect(topics.received(on: topics.current), "the next reply tries again")
        var never = ReplyTopics(instance: "m", rotateAfter: nil)
        #expect((0..<10).allSatisfy { _ in !never.received(on: never.current) })
    }

    @Test func theRequesterIsNamedWhateverTheGeneration() {
        #expect(Topics.requester(ofReplyTopic: "geochat.replies.gateway-1") == "gateway-1")
        #expect(Topics.requester(ofReplyTopic: "geochat.replies.gateway-1.r12") == "gateway-1")
        #expect(Topics.requester(ofReplyTopic: Topics.replies(instance: "a.rb", generation: 3)) == "a.rb")
        #expect(Topics.requester(ofReplyTopic: "geochat.replies.gw.r") == "gw.r")
    }
}
