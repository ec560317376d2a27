import Foundation
import GeoChatDomain
import PropertyBased
import Testing

@testable import GeoChatLegacyProtocol

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Property-based checks of the parsing layer against hostile input: whatever
/// the bytes, FormParameters either reads them or refuses them with the
/// contract's error, never crashes, and text that XML allows survives escaping
/// and a real XML parser unchanged.
@Suite struct HostileInputPropertyTests {
    /// Bytes that matter to the form encoding, mixed with arbitrary ones.
    static let formBytes = Gen<UInt8>.oneOf(
        Gen.element(of: Array("%&=+".utf8)).compactMap { $0 },
        Gen.element(of: Array("0123456789abcdefABCDEFgz".utf8)).compactMap { $0 },
        Gen<UInt8>.value(in: 0...255))

    /// Code points XML 1.0 allows, weighted towards the ones that need escaping.
    static let xmlScalar = Gen<Unicode.Scalar>.oneOf(
        Gen.element(of: Array("<>&\"'\t\n\r ;#x]".unicodeScalars)).compactMap { $0 },
        Gen.unicodeScalar(in: "\u{20}"..."\u{7E}"),
        Gen.unicodeScalar(in: "\u{A0}"..."\u{D7FF}"),
        Gen.unicodeScalar(in: "\u{E000}"..."\u{FFFD}"),
        Gen.unicodeScalar(in: "\u{10000}"..."\u{10FFFF}"))

    static let xmlText = xmlScalar.array(of: 0...60).map { scalars in
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars)
        return text
    }

    @Test func anyBytesParseOrAreRefusedWithTheContractsError() async {
        await propertyCheck(count: 2000, input: Self.formBytes.array(of: 0...200), Self.formBytes.array(of: 0...80)) {
            query, body in
            do throws(ProtocolError) {
                let parameters = try FormParameters(query: query, body: body)
                // Reading any name may refuse (bad UTF-8, XML characters, conflicts), never crash.
                for name in ["cmd", "msg", "a", "%", ""] { _ = try? parameters.text(name) }
            } catch {
                #expect([.badParam, .tooLarge].contains(error.code), "\(error)")
            }
        }
    }

    @Test func percentEncodedBytesDecodeToThemselves() async {
        await propertyCheck(count: 1000, input: Gen<UInt8>.value(in: 0...255).array(of: 0...300)) { bytes in
            let encoded = "v=" + bytes.map { String(format: "%%%02X", $0) }.joined()
            let parameters = try FormParameters(query: encoded, body: "")
            #expect(try parameters.resolved("v").map { Array(parameters.bytes[$0]) } == bytes)
        }
    }

    @Test func xmlSafeTextSurvivesTheFormEncoding() async {
        await propertyCheck(count: 1000, input: Self.xmlText) { text in
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            let encoded = text.addingPercentEncoding(withAllowedCharacters: allowed)!
            guard text.utf8.count <= Limits.maxParameterBytes else { return }
            let parameters = try FormParameters(query: "msg=" + encoded, body: "")
            #expect(try parameters.text("msg") == text)
        }
    }

    @Test func textWithCharactersXMLForbidsIsRefused() async {
        let forbidden = Gen<UInt32>.oneOf(
            Gen<UInt32>.value(in: 0...8), Gen<UInt32>.value(in: 0xB...0xC), Gen<UInt32>.value(in: 0xE...0x1F),
            Gen<UInt32>.value(in: 0xFFFE...0xFFFF))
        await propertyCheck(count: 500, input: Self.xmlText, forbidden) { text, bad in
            let encoded = Array(text.utf8).map { String(format: "%%%02X", $0) }.joined()
            let scalar = String(Unicode.Scalar(bad)!)
            let badEncoded = Array(scalar.utf8).map { String(format: "%%%02X", $0) }.joined()
            let parameters = try FormParameters(query: "msg=" + encoded + badEncoded, body: "")
            #expect(throws: ProtocolError.self) { try parameters.text("msg") }
        }
    }

    @Test func escapedTextReadsBackThroughAnXMLParser() async {
        await propertyCheck(count: 1000, input: Self.xmlText, Self.xmlText) { nick, text in
            let message = ChatMessage(room: 7, id: 1, nick: nick, text: text, addedAt: 1_795_392_002_000)
            let room = RoomInfo(id: 7, position: MercatorPoint(x: 0.5, y: 0.5)!, zoom: ZoomLevel(3)!, topic: text)
            for (document, element, expected) in [
                (LegacyXML.messages(room: 7, [message]), "text", text),
                (LegacyXML.messages(room: 7, [message]), "user", nick),
                (LegacyXML.room(room), "topic", text),
                (LegacyXML.error(ProtocolError(.badParam, text)), "error", text),
            ] {
                let reader = ElementText(element)
                let parser = XMLParser(data: Data(document.utf8))
                parser.delegate = reader
                #expect(parser.parse(), "not well-formed: \(document)")
                #expect(reader.text == expected, "\(element) read back differently from \(document.debugDescription)")
            }
        }
    }
}

/// Collects the character data of one element, as a SAX client (the iPhone's NSXMLParser) does.
final class ElementText: NSObject, XMLParserDelegate {
    let name: String
    var inside = false
    var text = ""

    init(_ name: String) { self.name = name }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if elementName == name { inside = true }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        if elementName == name { inside = false }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if inside { text += string }
    }
}
