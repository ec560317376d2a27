import Testing

@testable import GeoChatRuntime

/// Log lines from attacker-chosen values (a login name, a nick): one event is
/// one line, and nothing in it acts on the terminal that shows it.
@Suite struct LogfmtTests {
    @Test func plainValuesStayBareAndOthersAreQuotedAndEscaped() {
        #expect(LogfmtHandler.quote("room42") == "room42")
        #expect(LogfmtHandler.quote("two words") == "\"two words\"")
        #expect(LogfmtHandler.quote("say \"hi\"") == "\"say \\\"hi\\\"\"")
        #expect(LogfmtHandler.quote("") == "\"\"")
    }

    @Test func controlCharactersCannotForgeALineOrReachTheTerminal() {
        let forged = LogfmtHandler.quote("root\nts=2026 level=info msg=\"admin logged in\"")
        #expect(!forged.contains("\n"))
        #expect(forged.hasPrefix("\"root\\nts=2026"))
        #expect(LogfmtHandler.quote("a\u{1B}]0;owned\u{07}b") == "\"a\\u{1B}]0;owned\\u{7}b\"")
        #expect(LogfmtHandler.quote("\r") == "\"\\r\"")
        #expect(LogfmtHandler.quote("back\\slash") == "\"back\\\\slash\"")
    }
}
