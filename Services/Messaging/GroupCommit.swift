import GeoChatBus
import GeoChatDomain

/// Gathers the says that arrive while a transaction is under way and stores
/// them together in the next one (a `Batcher`): one commit (one WAL flush) for
/// as many says as came meanwhile, instead of one each (docs/architecture.md,
/// "Group commit").
///
/// One transaction at a time per instance: a say waits at most for the one
/// running and its own. A batch holds at most one say per room and per
/// idempotency key (a room's ids stay in the order its says arrived; a key
/// repeated in one statement would not see itself); a second say of a room
/// waits for the next batch. The command processor runs one command per room
/// at a time, so that rarely happens. A batch that fails as a whole (a
/// deadline passed, a unique violation from a redelivery running on another
/// instance, PostgreSQL away) is run again say by say, each in its own
/// transaction, so every say gets the answer it would have had alone.
final class GroupCommit: Sendable {
    private let batcher: Batcher<NewMessage, Appended?>

    /// `maxBatch`: the most says in one transaction.
    init(store: any MessageStore, maxBatch: Int = 256) {
        batcher = Batcher(next: { Self.nextBatch($0, max: maxBatch) }, store: { await Self.commit($0, to: store) })
    }

    /// What `MessageStore.append` answers for this say, stored in a shared transaction.
    func append(_ say: NewMessage) async throws -> Appended? { try await batcher.submit(say) }

    /// The first queued says, at most one per room and per key, up to `max`.
    static func nextBatch(_ queued: [NewMessage], max: Int) -> [Int] {
        var batch: [Int] = []
        var rooms = Set<RoomID>()
        var keys = Set<String>()
        for (index, say) in queued.enumerated() where batch.count < max {
            guard !rooms.contains(say.room), !keys.contains(say.key) else { continue }
            rooms.insert(say.room)
            keys.insert(say.key)
            batch.append(index)
        }
        return batch
    }

    /// Every store call is bounded by the time its says have left: the batch
    /// runs in no handler's task, so no deadline cancels it, and a pool waiting
    /// for a PostgreSQL that went away would otherwise hold every later say of
    /// the instance behind it (seen in the fault harness: a restarted
    /// PostgreSQL, then no say stored for minutes).
    private static func commit(_ says: [NewMessage], to store: any MessageStore) async
        -> [Result<Appended?, any Error>]
    {
        do {
            let within = says.map { $0.commitBy.remaining() }.min() ?? .zero
            let answers = try await bounded(by: max(within, .zero)) { try await store.append(says) }
            return answers.map { $0.mapError { $0 as any Error } }
        } catch {
            guard says.count > 1 else { return [.failure(error)] }
            var answers: [Result<Appended?, any Error>] = []
            for say in says {
                do {
                    answers.append(
                        .success(
                            try await bounded(by: max(say.commitBy.remaining(), .zero)) {
                                try await store.append(
                                    room: say.room, nick: say.nick, text: say.text, author: say.author, key: say.key,
                                    commitBy: say.commitBy)
                            }))
                } catch {
                    answers.append(.failure(error))
                }
            }
            return answers
        }
    }
}
