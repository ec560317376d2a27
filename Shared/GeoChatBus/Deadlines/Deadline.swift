import GeoChatDomain
import Synchronization

/// The moment a requester stops waiting, in wall-clock milliseconds because it
/// travels with the command to another process. Every hop keeps a margin before
/// it, and the margins live here, in one place:
///
/// - a handler's work ends `replyTravel` early, so its answer reaches the
///   requester before the requester gives up;
/// - a say must be committed `commit` early: the commit itself and the reply's
///   way back (a commit later than that rolls back: the requester would already
///   have answered "unavailable, nothing was done");
/// - a request a handler makes itself (messaging asking rooms) ends `nestedRequest`
///   early, leaving time for the handler to finish after it.
public struct Deadline: Sendable, Hashable, Comparable {
    public let epochMs: Int64

    public static let replyTravel: Duration = .milliseconds(100)
    public static let commit: Duration = .milliseconds(250)
    public static let nestedRequest: Duration = .milliseconds(200)

    public init(epochMs: Int64) { self.epochMs = epochMs }

    public static func after(_ timeout: Duration, nowMs: Int64 = WallClock.nowMs()) -> Deadline {
        Deadline(epochMs: nowMs + timeout.wholeMilliseconds)
    }

    public func hasPassed(nowMs: Int64 = WallClock.nowMs()) -> Bool { nowMs > epochMs }

    /// Time left, never negative.
    public func remaining(nowMs: Int64 = WallClock.nowMs()) -> Duration { .milliseconds(max(0, epochMs - nowMs)) }

    public func earlier(by margin: Duration) -> Deadline { Deadline(epochMs: epochMs - margin.wholeMilliseconds) }

    /// When a handler must have its answer ready.
    public var forWork: Deadline { earlier(by: Self.replyTravel) }
    /// The last moment a say may commit.
    public var forCommit: Deadline { earlier(by: Self.commit) }
    /// When a request made on the way must be answered.
    public var forNestedRequest: Deadline { earlier(by: Self.nestedRequest) }

    public static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.epochMs < rhs.epochMs }
}

/// The operation did not finish in the time it had.
public struct DeadlineExceeded: Error, Sendable {}
