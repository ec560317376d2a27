import GeoChatDomain
import Synchronization
import Testing

@testable import GatewayCore

/// The shell around `RoomTimelines`: that it asks the history source what the
/// rules say, hands the answers back, and runs gap fills. The source answers
/// only when the test says, so nothing here sleeps.
@Suite(.timeLimit(.minutes(1)))
struct MessageReadModelTests {
    struct Call: Equatable, Sendable {
        let room: RoomID
        let after: MessageID?
        let limit: Int
        /// A reader's answer (read-through), not a timeline's load or fill.
        var skipRemoved = false
    }

    /// A messaging service whose answers the test gives, call by call.
    final class ScriptedHistory: MessageHistorySource {
        private struct State {
            var prepared: [Result<MessageHistory, ProtocolError>] = []
            var held: [CheckedContinuation<Result<MessageHistory, ProtocolError>, Never>] = []
            var count = 0
        }

        private let state = Mutex(State())
        /// Past the prepared answers: hold the call for `answer`, or fail it at once.
        private let holdUnprepared: Bool
        let calls: AsyncStream<Call>
        private let callSink: AsyncStream<Call>.Continuation

        init(prepared: [Result<MessageHistory, ProtocolError>] = [], holdUnprepared: Bool = true) {
            (calls, callSink) = AsyncStream.makeStream(of: Call.self)
            self.holdUnprepared = holdUnprepared
            state.withLock { $0.prepared = prepared }
        }

        func history(room: RoomID, after: MessageID?, limit: Int, skipRemoved: Bool) async throws(ProtocolError)
            -> MessageHistory
        {
            let result = await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<MessageHistory, ProtocolError>, Never>) in
                let now = state.withLock { state -> Result<MessageHistory, ProtocolError>? in
                    state.count += 1
                    if !state.prepared.isEmpty { return state.prepared.removeFirst() }
                    if !holdUnprepared { return .failure(.unavailable) }
                    state.held.append(continuation)
                    return nil
                }
                callSink.yield(Call(room: room, after: after, limit: limit, skipRemoved: skipRemoved))
                if let now { continuation.resume(returning: now) }
            }
            return try result.get()
        }

        /// The committed heads `heads` answers.
        let committed = Mutex<[RoomHead]>([])
        private let headCalls = Mutex(0)

        /// How many head readings fail before one gets through (the owners not back yet).
        let failingHeadReads = Mutex(0)

        func heads(_ rooms: [RoomID]) async throws(ProtocolError) -> [RoomHead] {
            headCalls.withLock { $0 += 1 }
            if failingHeadReads.withLock({ failing in
                defer { failing = max(0, failing - 1) }
                return failing > 0
            }) {
                throw .unavailable
            }
            return committed.withLock { heads in heads.filter { rooms.contains($0.room) } }
        }

        /// How many times the heads were read.
        var headReads: Int { headCalls.withLock { $0 } }

        /// Answers the oldest held call.
        func answer(_ result: Result<MessageHistory, ProtocolError>) {
            let held = state.withLock { $0.held.isEmpty ? nil : $0.held.removeFirst() }
            held?.resume(returning: result)
        }

        var count: Int { state.withLock { $0.count } }
    }

    static let room: RoomID = 7

    static func message(_ id: MessageID) -> ChatMessage {
        ChatMessage(room: room, id: id, nick: "n", text: "text \(id)", addedAt: 1_700_000_000 + id.rawValue)
    }

    static func messages(_ ids: ClosedRange<MessageID>) -> [ChatMessage] { ids.map(message) }

    static func history(_ ids: ClosedRange<MessageID>) -> MessageHistory {
        MessageHistory(room: room, head: ids.upperBound, messages: messages(ids))
    }

    @Test func aFirstPollLoadsTheRoomThenPollsAreAnsweredFromMemory() async throws {
        let source = ScriptedHistory(prepared: [.success(Self.history(1...5))], holdUnprepared: false)
        let model = MessageReadModel(backend: source, capacity: 20)
        #expect(try await model.poll(room: Self.room, past: 0, limit: 3) == Self.messages(3...5))
        #expect(try await model.poll(room: Self.room, past: 1, limit: 2) == Self.messages(2...3))
        model.apply(Self.message(6))
        #expect(try await model.poll(room: Self.room, past: 5, limit: 10) == [Self.message(6)])
        #expect(source.count == 1)
        #expect(model.roomCount == 1)
        var calls = source.calls.makeAsyncIterator()
        #expect(await calls.next() == Call(room: Self.room, after: nil, limit: 20))
    }

    /// An operator's removal as one event (`MessagesRemoved`): every id leaves the polls, push
    /// subscribers are told each, and ids beyond the timeline's head are a gap to fill, not a skip.
    @Test func aRemovalEventTakesEveryIdItNamesOutOfThePolls() async throws {
        let source = ScriptedHistory(prepared: [.success(Self.history(1...6))], holdUnprepared: false)
        let model = MessageReadModel(backend: source, capacity: 20)
        #expect(try await model.poll(room: Self.room, past: 0, limit: 10) == Self.messages(1...6))
        let cursor = try #require(model.removals(in: Self.room, since: nil)).next
        model.apply(MessagesRemoved(room: Self.room, ids: [5, 2, 3]))
        #expect(try await model.poll(room: Self.room, past: 0, limit: 10).map(\.id) == [1, 4, 6])
        #expect(try await model.poll(room: Self.room, past: 1, limit: 1).map(\.id) == [4], "removed ids are skipped")
        #expect(model.removals(in: Self.room, since: cursor)?.ids == [2, 3, 5])
        model.apply(MessagesRemoved(room: Self.room, ids: []))
        #expect(source.count == 1, "answered from memory")
    }

    /// The per-address history limit is asked before a load, never for a poll
    /// answered from memory; a refusal loads nothing.
    @Test func onlyALoadAsksBeforeLoading() async throws {
        let source = ScriptedHistory(prepared: [.success(Self.history(1...5))], holdUnprepared: false)
        let model = MessageReadModel(backend: source, capacity: 20)
        let asked = Mutex(0)
        let refuse: () throws(ProtocolError) -> Void = { () throws(ProtocolError) in
            asked.withLock { $0 += 1 }
            throw ProtocolError(.rateLimited, "refused")
        }
        await #expect(throws: ProtocolError.self) {
            try await model.poll(room: Self.room, past: 0, limit: 3, beforeLoading: refuse)
        }
        #expect(source.count == 0 && asked.withLock { $0 } == 1)
        let admit: () throws(ProtocolError) -> Void = { () throws(ProtocolError) in asked.withLock { $0 += 1 } }
        #expect(try await model.poll(room: Self.room, past: 0, limit: 3, beforeLoading: admit) == Self.messages(3...5))
        #expect(try await model.poll(room: Self.room, past: 4, limit: 3, beforeLoading: refuse) == [Self.message(5)])
        #expect(source.count == 1 && asked.withLock { $0 } == 2)
    }

    @Test func anUnknownRoomAnswers404AndIsNotAskedAboutAgainAtOnce() async throws {
        let source = ScriptedHistory(prepared: [.failure(.noSuchChat)], holdUnprepared: false)
        let model = MessageReadModel(backend: source)
        for _ in 0..<2 {
            do {
                _ = try await model.poll(room: Self.room, past: 0, limit: 10)
                Issue.record("expected no_such_chat")
            } catch {
                #expect(error.code == .noSuchChat)
            }
        }
        #expect(source.count == 1)
    }

    @Test func aFailedLoadIsRetriedByTheNextPoll() async throws {
        let source = ScriptedHistory(
            prepared: [.failure(.outcomeUnknown), .success(Self.history(1...2))], holdUnprepared: false)
        let model = MessageReadModel(backend: source)
        await #expect(throws: ProtocolError.self) { try await model.poll(room: Self.room, past: 0, limit: 10) }
        #expect(try await model.poll(room: Self.room, past: 0, limit: 10) == Self.messages(1...2))
        #expect(source.count == 2)
    }

    @Test func olderThanTheTimelineKeepsIsReadFromTheSource() async throws {
        let source = ScriptedHistory(
            prepared: [.success(Self.history(21...30)), .success(Self.history(6...8))], holdUnprepared: false)
        let model = MessageReadModel(backend: source, capacity: 10)
        var calls = source.calls.makeAsyncIterator()
        #expect(try await model.poll(room: Self.room, past: 25, limit: 2) == Self.messages(26...27))
        #expect(try await model.poll(room: Self.room, past: 5, limit: 3) == Self.messages(6...8))
        #expect(await calls.next() == Call(room: Self.room, after: nil, limit: 10))
        #expect(await calls.next() == Call(room: Self.room, after: 5, limit: 3, skipRemoved: true))
    }

    @Test func aRoomRemovedWhileItLoadsAnswers404() async throws {
        let source = ScriptedHistory()
        let model = MessageReadModel(backend: source)
        var calls = source.calls.makeAsyncIterator()
        async let polled = model.poll(room: Self.room, past: 0, limit: 10)
        #expect(await calls.next() == Call(room: Self.room, after: nil, limit: Limits.maxMessageLimit))
        model.remove([Self.room])
        source.answer(.success(Self.history(1...3)))
        do {
            _ = try await polled
            Issue.record("expected no_such_chat")
        } catch {
            #expect((error as? ProtocolError)?.code == .noSuchChat)
        }
        #expect(source.count == 1)
    }

    @Test func aGapIsFetchedFromTheSourceAndNothingAboveItShowsBefore() async throws {
        let source = ScriptedHistory(prepared: [.success(Self.history(1...5))])
        let model = MessageReadModel(backend: source, capacity: 20)
        var calls = source.calls.makeAsyncIterator()
        #expect(try await model.poll(room: Self.room, past: 0, limit: 10) == Self.messages(1...5))
        #expect(await calls.next() == Call(room: Self.room, after: nil, limit: 20))

        model.apply(Self.message(7))
        model.apply(Self.message(9))
        #expect(
            await calls.next() == Call(room: Self.room, after: 5, limit: 20), "the gap fill asks for what follows 5")
        #expect(try await model.poll(room: Self.room, past: 5, limit: 10) == [], "7 and 9 wait for the gap")
        // The source knows only 6 yet: 6 and 7 show, 9 still waits for 8, and the fill asks again.
        source.answer(.success(MessageHistory(room: Self.room, head: 6, messages: [Self.message(6)])))
        #expect(await calls.next() == Call(room: Self.room, after: 7, limit: 20))
        #expect(try await model.poll(room: Self.room, past: 5, limit: 10) == Self.messages(6...7))
        source.answer(.success(MessageHistory(room: Self.room, head: 9, messages: Self.messages(8...9))))
    }

    /// A message whose event never reached this gateway, in a room that stays
    /// quiet: the head checks find it and the fill brings it.
    @Test func aMessageWhoseEventNeverCameIsFoundByTheHeadCheck() async throws {
        let source = ScriptedHistory(prepared: [.success(Self.history(1...5))])
        let model = MessageReadModel(backend: source, capacity: 20)
        var calls = source.calls.makeAsyncIterator()
        #expect(try await model.poll(room: Self.room, past: 0, limit: 10) == Self.messages(1...5))
        #expect(await calls.next() == Call(room: Self.room, after: nil, limit: 20))
        await model.checkHeadsOnce(onlySuspected: true)
        #expect(source.headReads == 0, "nothing suspected: nothing read")
        source.committed.withLock { $0 = [RoomHead(room: Self.room, head: 6)] }
        await model.checkHeadsOnce()
        #expect(source.count == 1, "the first sighting may be an event on its way")
        await model.checkHeadsOnce(onlySuspected: true)
        #expect(
            await calls.next() == Call(room: Self.room, after: 5, limit: 20), "still above when read again: fetched")
        source.answer(.success(MessageHistory(room: Self.room, head: 6, messages: [Self.message(6)])))
        var shown: [ChatMessage] = []
        for _ in 0..<10_000 {
            shown = try await model.poll(room: Self.room, past: 5, limit: 10)
            if !shown.isEmpty { break }
            await Task.yield()
        }
        #expect(shown == [Self.message(6)])
    }

    /// The broker restarted without the events it held: the heads are read at
    /// once and again until a reading gets through, not at the next round
    /// (an hour here), and the message whose event was lost is fetched.
    @Test func aBrokerThatLostItsEventsMakesTheHeadsBeReadAtOnce() async throws {
        let source = ScriptedHistory(prepared: [.success(Self.history(1...5))])
        let model = MessageReadModel(backend: source, capacity: 20)
        var calls = source.calls.makeAsyncIterator()
        #expect(try await model.poll(room: Self.room, past: 0, limit: 10) == Self.messages(1...5))
        #expect(await calls.next() == Call(room: Self.room, after: nil, limit: 20))
        let checks = Task { await model.checkHeads(every: .seconds(3600), confirmAfter: .milliseconds(10)) }
        defer { checks.cancel() }
        source.committed.withLock { $0 = [RoomHead(room: Self.room, head: 6)] }
        source.failingHeadReads.withLock { $0 = 2 }
        model.eventsMayBeLost()
        #expect(
            await calls.next() == Call(room: Self.room, after: 5, limit: 20),
            "found and fetched without waiting the round")
        #expect(source.headReads >= 3, "two failed readings, then one that got through")
        source.answer(.success(MessageHistory(room: Self.room, head: 6, messages: [Self.message(6)])))
    }
}
