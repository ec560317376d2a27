import Foundation
import GeoChatDomain
import Testing

/// A message text or topic is checked when made and again when decoded, so a
/// command cannot carry one the rule refuses.
@Suite struct CheckedTextTests {
    @Test func makingOneTrimsAndChecks() throws {
        #expect(try MessageText(checking: "  hi there \n").value == "hi there")
        #expect(throws: ProtocolError(.empty, "msg is empty")) { try MessageText(checking: "  ") }
        #expect(throws: ProtocolError(.tooLong, "text is too long")) {
            try MessageText(checking: String(repeating: "x", count: 501), field: "text")
        }
        #expect(throws: ProtocolError(.tooLong, "message is too long")) {
            try MessageText(checking: String(repeating: "x", count: 256), field: "message", length: 1...255)
        }
        #expect(try RoomTopic(checking: String(repeating: "t", count: 100)).value.count == 100)
        #expect(throws: ProtocolError.self) { try RoomTopic(checking: String(repeating: "t", count: 101)) }
    }

    @Test func itTravelsAsAStringAndIsCheckedAgainWhenDecoded() throws {
        let text = try MessageText(checking: "hello")
        let json = try JSONEncoder().encode([text])
        #expect(String(decoding: json, as: UTF8.self) == #"["hello"]"#)
        #expect(try JSONDecoder().decode([MessageText].self, from: json) == [text])
        for refused in [#"[""]"#, #"[" padded "]"#, #"["\u202E"]"#, "[\"\(String(repeating: "x", count: 501))\"]"] {
            #expect(throws: DecodingError.self, "\(refused)") {
                try JSONDecoder().decode([MessageText].self, from: Data(refused.utf8))
            }
        }
    }
}
