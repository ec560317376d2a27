import Foundation
import GeoChatDomain
import PropertyBased
import Testing

@testable import GeoChatLegacyProtocol

/// Whatever a client sends to `/chat.php`, the parser answers a checked command
/// or one of the contract's client errors; it never crashes and never claims
/// the server is at fault.
@Suite struct ChatCommandPropertyTests {
    static let clientErrors: Set<ProtocolError.Code> = [
        .missingParam, .badParam, .invalidNick, .empty, .tooLong, .unknownCommand, .unsupportedVersion,
        .invalidSession, .noSuchChat, .tooLarge,
    ]
    static let session = "n7fheb2lk5pv8d873a32tg92k3"

    /// Pieces of real requests, glued at random with random bytes between.
    static let piece = Gen<String>.oneOf(
        Gen.element(of: [
            "cmd=", "start", "say", "chats", "create", "join", "messages", "nick", "end", "v=5", "v=4", "&", "=",
            "nick=Ann", "sessionid=\(session)", "chatid=5", "chatid=-1", "chatid=99999999999999999999", "msg=",
            "message=", "text=", "topic=", "lon=0.5", "lat=1.5", "lon1=", "lat1=0", "lon2=1", "lat2=1", "minz=3",
            "maxz=2", "z=17", "z=18", "past=", "limit=0", "limit=201", "%", "%FF", "%00", "%3C", "%26", "+", "%C3%A9",
            "nan", "inf", "1e308", "-0", "0x1", "%EF%BF%BE",
        ]).compactMap { $0 },
        Gen.letterOrNumber.string(of: 0...6),
        Gen<UInt8>.value(in: 0x21...0x7E).array(of: 1...4).map { String(decoding: $0, as: UTF8.self) })

    static let query = piece.array(of: 0...14).map { $0.joined() }

    @Test func anyQueryIsACommandOrAClientError() async {
        await propertyCheck(count: 3000, input: Self.query, Self.query) { query, body in
            do throws(ProtocolError) {
                let parameters = try FormParameters(query: query, body: body)
                _ = try ChatCommand.parse(parameters, roomCap: 500)
            } catch {
                #expect(Self.clientErrors.contains(error.code), "\(query) / \(body): \(error)")
            }
        }
    }

    @Test func aValidSayKeepsItsTextTrimmedAndIntact() async {
        let text = Gen<Character>.oneOf(
            Gen.letterOrNumber.compactMap { $0 }, Gen.element(of: Array(" <>&\"';%+=é漢😀\t")).compactMap { $0 }
        ).array(of: 1...120).map { String($0) }
        await propertyCheck(count: 1000, input: text) { text in
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            let encoded = text.addingPercentEncoding(withAllowedCharacters: allowed)!
            let query = "cmd=say&sessionid=\(Self.session)&chatid=5&msg=" + encoded
            let trimmed = ChatText.trim(text)
            do throws(ProtocolError) {
                let command = try ChatCommand.parse(try FormParameters(query: query, body: ""), roomCap: 500)
                #expect(
                    command
                        == .say(session: SessionID(Self.session)!, room: 5, text: try MessageText(checking: trimmed)))
            } catch {
                #expect(trimmed.isEmpty && error.code == .empty, "\(text.debugDescription): \(error)")
            }
        }
    }
}
