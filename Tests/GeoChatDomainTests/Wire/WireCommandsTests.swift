import Foundation
import GeoChatDomain
import Testing

/// `WireCommands.all` is the list every service's handlers are held to, so it
/// must name every command type there is, each once within its topic.
@Suite struct WireCommandsTests {
    @Test func namesAreUniqueAndEveryCommandHasAnOwner() {
        // A handler table is per topic, so a name is unique within its topic ("lookup" is on two).
        let names = WireCommands.all.map { $0.topic + "/" + $0.name }
        #expect(Set(names).count == names.count)
        let owners: Set = [
            Topics.sessionCommands, Topics.adminCommands, Topics.roomsCommands, Topics.messagingCommands,
            Topics.expiryCommands,
        ]
        #expect(WireCommands.all.allSatisfy { owners.contains($0.topic) })
    }

    /// Every `struct …: …WireCommand` declared in `Shared/GeoChatDomain/Wire` is listed.
    @Test func everyDeclaredCommandIsListed() throws {
        let wire = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Shared/GeoChatDomain/Wire")
        let files = try FileManager.default.contentsOfDirectory(atPath: wire.path).filter { $0.hasSuffix(".swift") }
        let declaration = /struct (\w+): *(?:Session|Admin|Rooms|Messaging|Expiry)WireCommand\b/
        var declared: Set<String> = []
        for file in files {
            let source = try String(contentsOf: wire.appendingPathComponent(file), encoding: .utf8)
            for match in source.matches(of: declaration) { declared.insert(String(match.1)) }
        }
        #expect(declared.count > 30, "the scan found the declarations")
        let listed = Set(WireCommands.all.map { String(describing: $0) })
        #expect(declared.subtracting(listed).isEmpty, "declared but not in WireCommands.all")
        #expect(listed.subtracting(declared).isEmpty)
    }
}
