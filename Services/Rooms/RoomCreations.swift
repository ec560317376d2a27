import GeoChatBus
import GeoChatDomain

/// Stores the creates that arrive while a batch is being stored together in
/// the next one: two statements and one commit for as many creates as came
/// meanwhile, where each create was two statements and a commit of its own
/// (docs/benchmarks.md, "What a create costs, process by process"). One batch
/// at a time per instance; a create returns once its batch is committed, with
/// its room and the event staged for it. A batch that fails fails each of its
/// creates (nothing of it was stored; a phone's retry is answered as a new
/// create, or as the repeat of one that was committed after all).
final class RoomCreations: Sendable {
    private let batcher: Batcher<NewRoom, Announced<RoomInfo>>

    /// `maxBatch`: the most creates in one batch.
    init(store: any RoomStore, maxBatch: Int = 256) {
        batcher = Batcher(max: maxBatch) { rooms in
            do {
                return try await store.create(rooms).map { .success($0) }
            } catch {
                return rooms.map { _ in .failure(error) }
            }
        }
    }

    func create(_ room: NewRoom) async throws -> Announced<RoomInfo> { try await batcher.submit(room) }
}
