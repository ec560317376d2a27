import GeoChatDomain
import Synchronization

/// Wakes whoever waits for news of a room: long polls (`messages` with `wait`)
/// and push subscribers. A signal carries no data: the woken reader asks the
/// read model again, which only ever reveals a gap-free run of messages, so
/// push and polls can never disagree or skip an id.
///
/// A waiter registers before it reads, so news between its read and its wait
/// is not lost (the ticket remembers it). Deadlines are kept here and swept
/// by one loop (`expireDeadlines`), not by a timer task per waiter: an idle
/// subscriber costs one dictionary entry and one suspended task.
package final class RoomSignals: Sendable {
    package struct News: OptionSet, Sendable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let messages = News(rawValue: 1)
        package static let members = News(rawValue: 2)
    }

    package struct Ticket: Hashable, Sendable {
        package let room: RoomID
        package let number: UInt64
    }

    private struct Waiter {
        var deadline: ContinuousClock.Instant
        var news: News = []
        var continuation: CheckedContinuation<News, Never>?
    }

    private struct State {
        var waiters: [RoomID: [UInt64: Waiter]] = [:]
        var issued: UInt64 = 0
        var count = 0
        /// Tickets by the sweep slot their deadline falls in; a sweep visits
        /// only the slots that have come (spent tickets are skipped there).
        var slots: [Int64: [Ticket]] = [:]
        var sweptThrough: Int64 = -1
    }

    private let state = Mutex(State())
    private let epoch = ContinuousClock.now
    private let slotLength: Duration

    package init(slotLength: Duration = .milliseconds(250)) { self.slotLength = slotLength }

    private func slot(_ instant: ContinuousClock.Instant) -> Int64 {
        Int64((instant - epoch) / slotLength)
    }

    /// Waiters now (for metrics and tests).
    package var waiting: Int { state.withLock { $0.count } }

    /// A ticket for news of `room` from now until `deadline`. Read, then `wait`
    /// (or `cancel` if the read already had news).
    package func register(_ room: RoomID, until deadline: ContinuousClock.Instant) -> Ticket {
        state.withLock { state in
            state.issued += 1
            state.waiters[room, default: [:]][state.issued] = Waiter(deadline: deadline)
            state.count += 1
            let ticket = Ticket(room: room, number: state.issued)
            state.slots[max(slot(deadline), state.sweptThrough + 1), default: []].append(ticket)
            return ticket
        }
    }

    /// Waits for news since the ticket was issued; empty at the deadline or when
    /// the task is cancelled. The ticket is spent either way.
    package func wait(_ ticket: Ticket) async -> News {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<News, Never>) in
                let ready: News? = state.withLock { state in
                    guard var waiter = state.waiters[ticket.room]?[ticket.number] else { return [] }
                    if !waiter.news.isEmpty || Task.isCancelled || waiter.deadline <= .now {
                        Self.remove(ticket, from: &state)
                        return waiter.news
                    }
                    waiter.continuation = continuation
                    state.waiters[ticket.room]![ticket.number] = waiter
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel(ticket)
        }
    }

    /// Gives the ticket back unused (resumes its waiter, if any, with nothing).
    package func cancel(_ ticket: Ticket) {
        let waiter = state.withLock { Self.remove(ticket, from: &$0) }
        waiter?.continuation?.resume(returning: [])
    }

    /// News of a room: every waiter of it wakes (or finds it when it waits).
    package func ring(_ room: RoomID, _ news: News) {
        let woken: [CheckedContinuation<News, Never>] = state.withLock { state in
            guard let waiters = state.waiters[room] else { return [] }
            var woken: [CheckedContinuation<News, Never>] = []
            var kept: [UInt64: Waiter] = [:]
            for (number, var waiter) in waiters {
                waiter.news.formUnion(news)
                if let continuation = waiter.continuation {
                    woken.append(continuation)
                    state.count -= 1
                } else {
                    kept[number] = waiter
                }
            }
            state.waiters[room] = kept.isEmpty ? nil : kept
            return woken
        }
        for continuation in woken { continuation.resume(returning: news) }
    }

    /// Wakes, with nothing, the waiters whose deadline has passed.
    package func expire(now: ContinuousClock.Instant = .now) {
        let current = slot(now)
        let due: [CheckedContinuation<News, Never>] = state.withLock { state in
            var due: [CheckedContinuation<News, Never>] = []
            // Slots before the current one are wholly past; the current one is kept for its rest.
            while state.sweptThrough < current - 1 {
                state.sweptThrough += 1
                for ticket in state.slots.removeValue(forKey: state.sweptThrough) ?? [] {
                    guard let waiter = state.waiters[ticket.room]?[ticket.number] else { continue }
                    if waiter.continuation == nil {
                        // Registered and not waiting yet: `wait` sees the deadline itself.
                        state.slots[state.sweptThrough + 1, default: []].append(ticket)
                        continue
                    }
                    Self.remove(ticket, from: &state)
                    due.append(waiter.continuation!)
                }
            }
            return due
        }
        for continuation in due { continuation.resume(returning: []) }
    }

    /// Sweeps deadlines every `interval` until cancelled.
    package func expireDeadlines(every interval: Duration = .milliseconds(250)) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            expire()
        }
    }

    @discardableResult
    private static func remove(_ ticket: Ticket, from state: inout State) -> Waiter? {
        guard let waiter = state.waiters[ticket.room]?.removeValue(forKey: ticket.number) else { return nil }
        if state.waiters[ticket.room]?.isEmpty == true { state.waiters[ticket.room] = nil }
        state.count -= 1
        return waiter
    }
}
