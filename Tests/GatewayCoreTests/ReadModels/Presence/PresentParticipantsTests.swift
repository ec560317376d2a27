import GeoChatDomain
import Testing

@testable import GatewayCore

/// The one rule for who a room lists as present (`participants`, admin `rooms show`).
@Suite struct PresentParticipantsTests {
    static let nowMs: Int64 = 1_000_000
    static let timeoutMs: Int64 = 60_000

    /// A room's members with what the gateway knows of them.
    struct Room {
        let presence = PresenceTracker(gateway: "test", timeoutMs: { PresentParticipantsTests.timeoutMs })
        let bans = BanList()
        var members: [Member] = []
        var directory: [SessionID: SessionInfo] = [:]

        /// A member last seen `ago` ms before now; `directoryNick`: the session
        /// directory knows the session, under that nick.
        mutating func member(
            _ nick: String, seenAgoMs ago: Int64 = 0, directoryNick: String? = nil, ended: Bool = false
        )
            -> SessionID
        {
            let id = SessionID.random()
            members.append(Member(session: id, nick: nick))
            presence.seen(id, atMs: PresentParticipantsTests.nowMs - ago)
            if let directoryNick { directory[id] = SessionInfo(id: id, nick: directoryNick, version: 3, ended: ended) }
            return id
        }

        func ban(_ target: BanTarget) {
            bans.apply(
                Ban(
                    target: target, active: true, reason: "test", by: "admin", atMs: 0,
                    version: Int64(bans.active.count + 1)))
        }

        func present() -> [String] {
            PresentParticipants.nicks(
                of: members,
                isPresent: {
                    presence.isPresent(
                        $0.session, nowMs: PresentParticipantsTests.nowMs, timeoutMs: PresentParticipantsTests.timeoutMs
                    )
                },
                knownSession: { directory[$0] },
                isBanned: bans.isBanned(session:nick:))
        }
    }

    @Test func membersSeenWithinTheTimeoutArePresentTheBoundaryIncluded() {
        var room = Room()
        _ = room.member("now")
        _ = room.member("edge", seenAgoMs: Self.timeoutMs)
        _ = room.member("late", seenAgoMs: Self.timeoutMs + 1)
        #expect(room.present() == ["edge", "now"])
    }

    @Test func aMemberNeverSeenIsNotPresent() {
        var room = Room()
        room.members.append(Member(session: SessionID.random(), nick: "silent"))
        _ = room.member("here")
        #expect(room.present() == ["here"])
    }

    @Test func theNickComesFromTheSessionDirectoryWhenItKnowsTheSession() {
        var room = Room()
        _ = room.member("before", directoryNick: "after")
        _ = room.member("unknownToTheDirectory")
        #expect(room.present() == ["after", "unknownToTheDirectory"])
    }

    @Test func theNewerNickWinsBetweenTheDirectoryAndTheMembership() {
        var room = Room()
        let renamedHere = room.member("old", directoryNick: "new")  // directory at version 3
        room.members[room.members.count - 1].nickVersion = 2
        let renamedThere = room.member("newer", directoryNick: "stale")
        room.members[room.members.count - 1].nickVersion = 4  // the rename reached the rooms service first
        #expect(room.present() == ["new", "newer"])
        _ = (renamedHere, renamedThere)
    }

    @Test func aJoinOrSayTheRoomsServiceRecordedIsASignOfLife() {
        var room = Room()
        room.members.append(Member(session: SessionID.random(), nick: "joinedElsewhere", activeAtMs: Self.nowMs - 1000))
        room.members.append(
            Member(session: SessionID.random(), nick: "longAgo", activeAtMs: Self.nowMs - Self.timeoutMs - 1))
        let present = PresentParticipants.nicks(
            of: room.members,
            isPresent: {
                max(room.presence.lastSeenMs($0.session) ?? 0, $0.activeAtMs ?? 0) >= Self.nowMs - Self.timeoutMs
            },
            knownSession: { _ in nil }, isBanned: { _, _ in false })
        #expect(present == ["joinedElsewhere"])
    }

    @Test func endedSessionsAreDropped() {
        var room = Room()
        _ = room.member("gone", directoryNick: "gone", ended: true)
        _ = room.member("stays", directoryNick: "stays")
        #expect(room.present() == ["stays"])
    }

    @Test func bannedSessionsAndNicksAreDroppedUnderTheNickTheyUseNow() {
        var room = Room()
        let banned = room.member("victim")
        room.ban(.session(banned))
        _ = room.member("spammer")
        _ = room.member("SPAMMER")  // nick bans ignore ASCII case
        _ = room.member("innocent", directoryNick: "spammer")  // renamed into the ban
        _ = room.member("spammer", directoryNick: "reformed")  // renamed out of it
        room.ban(.nick("spammer")!)
        _ = room.member("bystander")
        #expect(room.present() == ["bystander", "reformed"])
    }

    @Test func nicksAreInPlainByteOrderAndRepeatedForEachSession() {
        var room = Room()
        for nick in ["zed", "adam", "Zoe", "bob", "Lydia", "a_1", "aB", "bob"] { _ = room.member(nick) }
        // Byte order: capitals before small letters, '_' between them.
        #expect(room.present() == ["Lydia", "Zoe", "aB", "a_1", "adam", "bob", "bob", "zed"])
    }

    @Test func anEmptyRoomHasNobody() {
        #expect(Room().present() == [])
    }
}
