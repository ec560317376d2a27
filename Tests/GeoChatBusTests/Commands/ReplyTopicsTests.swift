import GeoChatDomain
import Testing

@testable import GeoChatBus

/// A requester's reply topics: replaced after so many replies, a replaced one's
/// reader closed once no request naming it still waits, the topic deleted 2 s later.
@Suite struct ReplyTopicsTests {
    @Test func aTopicIsReplacedAfterItsRepliesAndDeletedOnceDrained() {
        var topics = ReplyTopics(instance: "gateway-1", rotateAfter: 3)
        #expect(topics.current == "geochat.replies.gateway-1")
        let waiting = topics.hold()
        let asks = (0..<4).map { _ in topics.received(on: waiting) }
        #expect(asks == [false, false, true, false], "the third reply asks for the next topic, once")
        let next = topics.nextTopic
        #expect(next == "geochat.replies.gateway-1.r1")
        let replaced = topics.rotated(to: next)
        #expect(replaced == "geochat.replies.gateway-1")
        #expect(topics.current == next)
        let named = topics.hold()
        #expect(named == next, "new requests name the new topic")
        #expect(topics.drained().isEmpty, "a request still waits on the old one")
        topics.release(waiting)
        #expect(topics.drained() == ["geochat.replies.gateway-1"])
        topics.readerClosed("geochat.replies.gateway-1", atMs: 50_000)
        #expect(topics.drained().isEmpty && topics.retired.isEmpty)
        #expect(topics.deletable(atMs: 51_999).isEmpty, "its reader's last fetch may still be under way")
        #expect(topics.deletable(atMs: 52_000) == ["geochat.replies.gateway-1"])
        #expect(topics.replaced == ["geochat.replies.gateway-1"], "a requester that stops deletes it")
        topics.deleted(["geochat.replies.gateway-1"])
        #expect(topics.deletable(atMs: 90_000).isEmpty && topics.replaced.isEmpty)
        let late = topics.received(on: "geochat.replies.gateway-1")
        #expect(!late, "a late reply on a replaced topic counts for nothing")
    }

    @Test func aFailedReplacementIsTriedAgainAndNoneWithoutALimit() {
        var topics = ReplyTopics(instance: "m", rotateAfter: 1)
        let first = topics.received(on: topics.current)
        topics.rotationFailed()
        let again = topics.received(on: topics.current)
        #expect(first && again, "the next reply tries again")
        var never = ReplyTopics(instance: "m", rotateAfter: nil)
        let asks = (0..<10).map { _ in never.received(on: never.current) }
        #expect(!asks.contains(true))
    }

    /// A restarted requester never names a topic an earlier start of the same
    /// instance named: an old topic holds that start's replies (Tansu lists them
    /// all on every fetch), or was deleted at its shutdown.
    @Test func eachStartOfARotatingRequesterHasTopicsOfItsOwn() {
        let startedAt: Int64 = 1_795_680_000_000
        var first = ReplyTopics(instance: "gateway-1", rotateAfter: 2, startedAtMs: startedAt)
        let second = ReplyTopics(instance: "gateway-1", rotateAfter: 2, startedAtMs: startedAt + 1)
        #expect(first.current == "geochat.replies.gateway-1.r1795680000000000")
        #expect(second.current == "geochat.replies.gateway-1.r1795680000001000")
        // A thousand replacements in the first start's first millisecond would be needed to reach the second's.
        for _ in 0..<999 {
            _ = first.received(on: first.current)
            if first.received(on: first.current) { _ = first.rotated(to: first.nextTopic) }
        }
        #expect(first.current == "geochat.replies.gateway-1.r1795680000000999")
        #expect(first.current != second.current)
        #expect(Topics.requester(ofReplyTopic: second.current) == "gateway-1")
        #expect(Topics.isReplyTopic(second.current))
        // Never rotating (a broker that trims by retention): the plain name, whenever it starts.
        let kafka = ReplyTopics(instance: "gateway-1", rotateAfter: nil, startedAtMs: startedAt)
        #expect(kafka.current == "geochat.replies.gateway-1")
    }

    @Test func theRequesterIsNamedWhateverTheGeneration() {
        #expect(Topics.requester(ofReplyTopic: "geochat.replies.gateway-1") == "gateway-1")
        // Only reply topics may be named as a command's replyTo (CommandProcessor).
        #expect(Topics.isReplyTopic(Topics.replies(instance: "gateway-1", generation: 4)))
        for forged in [
            "geochat.bans", "geochat.settings", "geochat.messaging.events", "geochat.replies.", "geochat.repliesx",
        ] {
            #expect(!Topics.isReplyTopic(forged), "\(forged)")
        }
        #expect(Topics.requester(ofReplyTopic: "geochat.replies.gateway-1.r12") == "gateway-1")
        #expect(Topics.requester(ofReplyTopic: Topics.replies(instance: "a.rb", generation: 3)) == "a.rb")
        #expect(Topics.requester(ofReplyTopic: "geochat.replies.gw.r") == "gw.r")
    }
}
