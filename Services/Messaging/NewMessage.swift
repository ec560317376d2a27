import GeoChatBus
import GeoChatDomain
import GeoChatKafka

/// A say to append: what `append(room:nick:text:author:key:commitBy:)` takes.
struct NewMessage: Sendable {
    let room: RoomID
    let nick: String
    let text: String
    let author: SessionID?
    let key: String
    let commitBy: Deadline
}
