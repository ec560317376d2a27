import GatewayCore
import NIOCore
import Synchronization

/// Push writes under way, so that one a connection has stopped taking can be
/// found and its connection closed: a subscriber that stopped reading holds
/// no more than what the connection buffers, and not for long.
///
/// A write waits while the connection's outbound buffer is over its high
/// watermark (NIO's backpressure), so the only sign of a stalled subscriber is
/// a write that does not end. One sweep (`closeStalled`) looks at the writes
/// under way, which are few (a write to a reading client ends at once); no
/// subscriber has a timer or a task of its own.
final class PendingWrites: Sendable {
    struct Watch: Sendable {
        fileprivate let number: UInt64
    }

    private struct Write {
        let connection: any Channel
        let since: ContinuousClock.Instant
        var cutOff = false
    }

    private struct State {
        var writes: [UInt64: Write] = [:]
        var issued: UInt64 = 0
    }

    private let state = Mutex(State())

    init() {}

    /// A write to `connection` begins.
    func begin(_ connection: any Channel, now: ContinuousClock.Instant = .now) -> Watch {
        state.withLock { state in
            state.issued += 1
            state.writes[state.issued] = Write(connection: connection, since: now)
            return Watch(number: state.issued)
        }
    }

    /// The write ended; false if the sweep had already cut its connection off.
    func end(_ watch: Watch) -> Bool {
        state.withLock { $0.writes.removeValue(forKey: watch.number)?.cutOff != true }
    }

    /// Closes the connections of writes under way for longer than `timeout`;
    /// returns how many it cut off.
    @discardableResult
    func closeStalled(after timeout: Duration, now: ContinuousClock.Instant = .now) -> Int {
        let stalled: [any Channel] = state.withLock { state in
            var stalled: [any Channel] = []
            for (number, write) in state.writes where !write.cutOff && now - write.since >= timeout {
                state.writes[number]?.cutOff = true
                stalled.append(write.connection)
            }
            return stalled
        }
        // Closing fails the waiting write, which ends that subscriber's stream.
        for connection in stalled { connection.close(promise: nil) }
        return stalled.count
    }

    /// Writes under way (for tests).
    var count: Int { state.withLock { $0.writes.count } }
}
