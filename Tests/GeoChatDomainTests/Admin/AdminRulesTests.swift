import Foundation
import XCTest

@testable import GeoChatDomain

final class AdminRulesTests: XCTestCase {
    func testTokensAreLongRandomAndOnlyTheirShapeHashes() throws {
        let a = BearerToken.generate()
        let b = BearerToken.generate()
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(a.count, 4 + 64)  // 256 bits
        let hash = try XCTUnwrap(BearerToken.hash(a))
        XCTAssertEqual(hash.count, 64)
        XCTAssertEqual(BearerToken.hash(a), hash)
        XCTAssertNotEqual(BearerToken.hash(b), hash)
        XCTAssertFalse(hash.contains(String(a.dropFirst(4).prefix(16))))
        for forged in [
            "", "gca_", "gca_" + String(repeating: "g", count: 64), "xyz_" + String(repeating: "a", count: 64),
            "gca_" + String(repeating: "a", count: 63), "gca_" + String(repeating: "A", count: 64),
        ] {
            XCTAssertNil(BearerToken.hash(forged), forged)
        }
    }

    func testTheTokenHashIsSHA256OfTheToken() {
        // sha256("gca_" + 64 zeros), computed with `printf %s … | sha256sum`.
        let token = "gca_" + String(repeating: "0", count: 64)
        XCTAssertEqual(BearerToken.hash(token), "163c2cfa7cbf6b3268cc13477a70bfbfccac6a3926b8b442c8c92f87b98e2d45")
    }

    func testABanOnANickCoversEveryCaseAndEverySessionUsingIt() {
        let bans = BanList()
        let session = SessionID.random()
        let other = SessionID.random()
        bans.apply(Ban(target: .nick("Bob")!, active: true, reason: "", by: "alice", atMs: 1, version: 5))
        XCTAssertTrue(bans.isBanned(session: session, nick: "bob"))
        XCTAssertTrue(bans.isBanned(session: other, nick: "BOB"))
        XCTAssertTrue(bans.isBanned(nick: "bOb"))
        XCTAssertFalse(bans.isBanned(session: session, nick: "bobby"))
        XCTAssertFalse(bans.isBanned(nick: "not a nick"))
    }

    func testASessionBanCoversThatSessionOnly() {
        let bans = BanList()
        let banned = SessionID.random()
        let spared = SessionID.random()
        bans.apply(Ban(target: .session(banned), active: true, reason: "", by: "alice", atMs: 1, version: 1))
        XCTAssertTrue(bans.isBanned(session: banned, nick: "x"))
        XCTAssertFalse(bans.isBanned(session: spared, nick: "x"))
    }

    /// The list answers "no" at once while no ban is in force: its count of
    /// bans in force follows bans, lifts, repeats and stale records.
    func testTheCountOfBansInForceFollowsBansAndLifts() {
        let bans = BanList()
        let session = SessionID.random()
        let carol = BanTarget.nick("carol")!
        let dave = BanTarget.nick("dave")!
        bans.apply(Ban(target: carol, active: true, reason: "", by: "a", atMs: 1, version: 1))
        bans.apply(Ban(target: carol, active: true, reason: "", by: "a", atMs: 1, version: 2))
        bans.apply(Ban(target: dave, active: true, reason: "", by: "a", atMs: 1, version: 3))
        bans.apply(Ban(target: carol, active: false, reason: "", by: "a", atMs: 2, version: 4))
        XCTAssertFalse(bans.isBanned(session: session, nick: "carol"))
        XCTAssertTrue(bans.isBanned(session: session, nick: "dave"))
        bans.apply(Ban(target: dave, active: false, reason: "", by: "a", atMs: 2, version: 5))
        bans.apply(Ban(target: dave, active: true, reason: "", by: "a", atMs: 1, version: 3))  // stale
        XCTAssertFalse(bans.isBanned(nick: "dave"))
        bans.apply(Ban(target: .session(session), active: true, reason: "", by: "a", atMs: 3, version: 6))
        XCTAssertTrue(bans.isBanned(session: session, nick: "dave"))
        XCTAssertEqual(bans.active.count, 1)
    }

    func testTheHighestVersionWinsWhateverTheArrivalOrder() {
        let target = BanTarget.nick("mallory")!
        let banned = Ban(target: target, active: true, reason: "", by: "a", atMs: 1, version: 7)
        let lifted = Ban(target: target, active: false, reason: "", by: "a", atMs: 2, version: 9)
        for order in [[banned, lifted], [lifted, banned], [lifted, banned, banned]] {
            let bans = BanList()
            order.forEach(bans.apply)
            XCTAssertFalse(bans.isBanned(nick: "mallory"))
            XCTAssertTrue(bans.active.isEmpty)
        }
        let settings = LiveSettings()
        settings.apply(SettingValue(name: "room.cap", value: 10, version: 4, updatedBy: "a", updatedAtMs: 1))
        settings.apply(SettingValue(name: "room.cap", value: 99, version: 3, updatedBy: "a", updatedAtMs: 1))
        XCTAssertEqual(settings.int(.roomCap, default: 500), 10)
        XCTAssertEqual(settings.int(.presenceTimeout, default: 60), 60)
    }

    func testBanTargetsAreCheckedWhenDecoded() throws {
        let good = #"{"kind":"session","value":"0123456789abcdefghijklmnop"}"#
        XCTAssertEqual(try JSONDecoder().decode(BanTarget.self, from: Data(good.utf8)).kind, .session)
        for bad in [
            #"{"kind":"session","value":"short"}"#, #"{"kind":"nick","value":"two words"}"#,
            #"{"kind":"ip","value":"x"}"#,
        ] {
            XCTAssertThrowsError(try JSONDecoder().decode(BanTarget.self, from: Data(bad.utf8)), bad)
        }
        XCTAssertEqual(BanTarget.session(SessionID("0123456789abcdefghijklmnop")!).description, "session 012345…")
    }

    func testSettingsChangesAreCheckedAsAWhole() throws {
        XCTAssertEqual(
            try SettingsCatalog.validate(["room.cap": 200, "presence.timeout.s": 30]),
            [.roomCap: 200, .presenceTimeout: 30])
        for bad: [String: Int] in [
            [:], ["room.cap": 0], ["room.cap": 5001], ["nope": 1], ["room.cap": 10, "expiry.interval.s": 0],
        ] {
            XCTAssertThrowsError(try SettingsCatalog.validate(bad)) { error in
                XCTAssertTrue([.badParam, .missingParam].contains((error as? ProtocolError)?.code), "\(bad)")
            }
        }
        XCTAssertEqual(Set(SettingsCatalog.all.map(\.name.rawValue)).count, SettingsCatalog.all.count)
        for definition in SettingsCatalog.all { XCTAssertTrue(definition.range.contains(definition.defaultValue)) }
        // Every named setting has its definition (the typed lookup relies on it).
        let named: [SettingName] = [
            .presenceTimeout, .sessionLifetime, .roomIdleLimit, .expiryInterval, .roomCap, .ratePostsPerMinute,
            .ratePostBurst, .rateRoomsPerHour, .adminLoginFailures,
        ]
        XCTAssertEqual(Set(named.map(\.rawValue)), Set(SettingsCatalog.all.map(\.name.rawValue)))
        XCTAssertEqual(SettingsCatalog.definition(.adminLoginFailures).name, .adminLoginFailures)
    }

    func testDurationsAsOperatorsWriteThem() {
        XCTAssertEqual(DurationText.seconds("30d"), 2_592_000)
        XCTAssertEqual(DurationText.seconds("12h"), 43_200)
        XCTAssertEqual(DurationText.seconds("90m"), 5400)
        XCTAssertEqual(DurationText.seconds("45s"), 45)
        XCTAssertEqual(DurationText.seconds("3600"), 3600)
        for bad in ["", "d", "-1d", "1.5h", "3x", "99999999999999999d", "１d"] {
            XCTAssertNil(DurationText.seconds(bad), bad)
        }
        XCTAssertEqual(DurationText.format(2_592_000), "30d")
        XCTAssertEqual(DurationText.format(5400), "90m")
        XCTAssertEqual(DurationText.format(61), "61s")
    }

    func testAdminNamesAndPasswords() {
        XCTAssertNotNil(AdminName("alice_1"))
        XCTAssertNil(AdminName("1alice"))
        XCTAssertNil(AdminName("al ice"))
        XCTAssertThrowsError(try AdminPassword.check("short"))
        XCTAssertThrowsError(try AdminPassword.check(String(repeating: "x", count: 73)))
        XCTAssertNoThrow(try AdminPassword.check("correct horse battery"))
    }
}
