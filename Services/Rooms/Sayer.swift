import Foundation
import GeoChatBus
import GeoChatDomain

/// The author of a say, as the rooms service learns it (`JoinBySaying`).
struct Sayer: Hashable, Sendable {
    let room: RoomID
    /// Nil: an anonymous post (add.php), which only visits the room.
    let session: SessionID?
    let nick: String
}
