import Foundation
import GeoChatDomain
import Testing

@Suite struct RulesTests {
    @Test func nicknameRule() {
        for good in ["Lydia", "b", "a_1", String(repeating: "x", count: 32)] {
            #expect(Nickname(good) != nil, "\(good)")
        }
        for bad in ["", "1abc", "_a", "a-b", "a b", "Grüße", String(repeating: "x", count: 33)] {
            #expect(Nickname(bad) == nil, "\(bad)")
        }
    }

    @Test func sessionIDsAreWellFormedAndDistinct() {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = SessionID.random()
            #expect(id.value.count == 26)
            #expect(
                id.value.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x76).contains($0) }, "\(id.value)")
            #expect(SessionID(id.value) == id)
            seen.insert(id.value)
        }
        #expect(seen.count == 1000)
        #expect(SessionID("n7fheb2lk5pv8d873a32tg92k3")?.value == "n7fheb2lk5pv8d873a32tg92k3")
        #expect(SessionID("n7fheb2lk5pv8d873a32tg92kw") == nil)  // 'w' is outside 0-9a-v
        #expect(SessionID("N7FHEB2LK5PV8D873A32TG92K3") == nil)
        #expect(SessionID("n7fheb2lk5pv8d873a32tg92k") == nil)
        #expect(SessionID("n7fheb2lk5pv8d873a32tg92k33") == nil)
        #expect(SessionID("short") == nil)
    }

    /// A session id is a bearer secret: printing one (logs, interpolation) shows a prefix only.
    @Test func aPrintedSessionIDShowsOnlyAPrefix() throws {
        let id = try #require(SessionID("n7fheb2lk5pv8d873a32tg92k3"))
        #expect(id.description == "n7fheb…")
        #expect("\(id)" == "n7fheb…")
        #expect(String(describing: id) == "n7fheb…")
        for _ in 0..<100 {
            let random = SessionID.random()
            #expect(!"\(random)".contains(random.value.dropFirst(6)), "\(random.value)")
        }
    }

    @Test func chatTextTrimsAndCountsCodePoints() {
        #expect(ChatText.validate("  hi \n", length: 1...5) == .success("hi"))
        #expect(ChatText.validate(" \t ", length: 1...5) == .failure(.empty))
        #expect(ChatText.validate("👋👋👋", length: 1...3) == .success("👋👋👋"))
        #expect(ChatText.validate("👋👋👋👋", length: 1...3) == .failure(.tooLong))
    }

    @Test func xmlSafety() {
        #expect(ChatText.isXMLSafe("tab\tnewline\n <&> 👋"))
        #expect(!ChatText.isXMLSafe("bell\u{07}"))
        #expect(!ChatText.isXMLSafe("\u{FFFE}"))
    }

    /// The byte-level shortcut answers as the XML 1.0 rule does for every
    /// scalar at the edges of its ranges, alone and inside other text, and
    /// for the other characters whose UTF-8 starts with 0xEF.
    @Test func xmlSafetyAtTheEdgesOfTheRule() {
        let edges: [UInt32] = [
            0x0, 0x8, 0x9, 0xA, 0xB, 0xC, 0xD, 0xE, 0x1F, 0x20, 0x7E, 0x7F, 0x80, 0xD7FF, 0xE000,
            0xEFFF, 0xF000, 0xFEFF, 0xFFFD, 0xFFFE, 0xFFFF, 0x10000, 0x10FFFF,
        ]
        for value in edges {
            let scalar = Unicode.Scalar(value)!
            let allowed =
                [0x9, 0xA, 0xD].contains(value) || (0x20...0xD7FF).contains(value)
                || (0xE000...0xFFFD).contains(value) || (0x10000...0x10FFFF).contains(value)
            #expect(ChatText.isXMLSafe(String(scalar)) == allowed, "U+\(String(value, radix: 16))")
            #expect(ChatText.isXMLSafe("a" + String(scalar) + "é") == allowed, "U+\(String(value, radix: 16))")
        }
    }

    /// Characters that let a text pose as another where it is shown are
    /// refused, never stored; what real text needs stays (issue 26, item 6).
    @Test func displaySpoofingCharactersAreRefusedAndRealTextIsNot() {
        let spoofs = [
            "gro\u{202E}gnp.exe", "\u{202A}x", "\u{202B}x", "\u{202C}x", "\u{202D}x", "\u{2066}x\u{2069}", "\u{2067}x",
            "\u{2068}x",
            "C1 \u{85} next line", "C1 \u{9B}31m", "DEL \u{7F}", "line\u{2028}separator", "para\u{2029}graph",
            "word\u{2060}joiner", "invisible\u{2062}times", "\u{FEFF}bom", "mongolian\u{180E}", "\u{206A}deprecated",
        ]
        for text in spoofs {
            #expect(
                ChatText.validate(text, length: 1...100) == .failure(.displayControl),
                "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        let real = [
            "👨‍👩‍👧‍👦 ZWJ family", "می‌خواهم ZWNJ in Persian", "עברית\u{200F} mark", "عربي\u{061C}", "ภาษา\u{200B}ไทย",
            "e\u{301} combining", "Grüße – ½ €",
        ]
        for text in real { #expect(ChatText.validate(text, length: 1...100) == .success(text), "\(text)") }
    }

    @Test func mercatorBoxIncludesEdgesInAnyCornerOrder() {
        let box = MercatorBox(MercatorPoint(x: 0.8, y: 1)!, MercatorPoint(x: 0, y: 0.4)!)
        #expect(box.contains(MercatorPoint(x: 0.8, y: 0.42)!))
        #expect(box.contains(MercatorPoint(x: 0, y: 0.4)!))
        #expect(!box.contains(MercatorPoint(x: 0.8000001, y: 0.5)!))
        #expect(MercatorPoint(x: .nan, y: 0.5) == nil)
        #expect(MercatorPoint(x: 1.0000001, y: 0.5) == nil)
    }

    @Test func mercatorFromDegrees() throws {
        let equator = try #require(MercatorPoint(longitude: 0, latitude: 0))
        #expect(abs(equator.x - 0.5) <= 1e-12)
        #expect(abs(equator.y - 0.5) <= 1e-12)
        let north = try #require(MercatorPoint(longitude: -180, latitude: 85.0511))
        #expect(abs(north.x) <= 1e-12)
        #expect(abs(north.y) <= 1e-5)
    }

    @Test func errorStatuses() {
        #expect(ProtocolError.Code.badParam.httpStatus == 400)
        #expect(ProtocolError.Code.invalidSession.httpStatus == 403)
        #expect(ProtocolError.Code.noSuchChat.httpStatus == 404)
        #expect(ProtocolError.Code.tooLarge.httpStatus == 413)
        #expect(ProtocolError.Code.rateLimited.httpStatus == 429)
        #expect(ProtocolError.Code.unavailable.httpStatus == 503)
    }

    @Test func aRoomHeadTravelsAsAPairOrWithItsRemovalsATriple() throws {
        let heads = [
            RoomHead(room: 1_234_567, head: 57), RoomHead(room: 2, head: 0), RoomHead(room: 3, head: 9, removed: 4),
        ]
        let json = String(decoding: try JSONEncoder().encode(heads), as: UTF8.self)
        #expect(json == "[[1234567,57],[2,0],[3,9,4]]")
        #expect(try JSONDecoder().decode([RoomHead].self, from: Data(json.utf8)) == heads)
        for bad in ["[[1]]", "[[1,2,3,4]]", "[{\"room\":1,\"head\":2}]", "[[\"1\",2]]", "[[1,2,\"3\"]]"] {
            #expect(throws: DecodingError.self, "\(bad)") {
                try JSONDecoder().decode([RoomHead].self, from: Data(bad.utf8))
            }
        }
    }
}

/// One rule for text shown in logs and terminals (`ControlCharacters`).
@Suite struct ControlCharacterTests {
    @Test func controlsAreEscapedAndEverythingElseStays() {
        #expect(ControlCharacters.escaped("Lydia Åström – 你好 👋") == "Lydia Åström – 你好 👋")
        #expect(ControlCharacters.escaped("a\nb\rc\td") == "a\\nb\\rc\\td")
        #expect(ControlCharacters.escaped("\u{1B}[31mred\u{1B}[0m") == "\\u{1B}[31mred\\u{1B}[0m")
        #expect(ControlCharacters.escaped("\u{9B}2J\u{7F}\u{0}") == "\\u{9B}2J\\u{7F}\\u{0}")
        #expect(ControlCharacters.escaped("evil\u{202E}txt.exe\u{2028}") == "evil\\u{202E}txt.exe\\u{2028}")
    }

    @Test func noEscapedTextContainsAControl() {
        for value in 0...0x2100 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "x" + String(Character(scalar)) + "y"
            #expect(!ControlCharacters.contains(in: ControlCharacters.escaped(text)), "U+\(String(value, radix: 16))")
        }
    }
}
