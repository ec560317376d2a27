import Testing

@testable import Gateway

@Suite struct PushSettingsTests {
    /// The default cap on waiting places follows the memory the process may use: 1 GiB gives 2,730 places.
    @Test func theGatewaysCapFollowsItsMemory() {
        #expect(PushSettings.placesFor(memoryBytes: 1 << 30) == 2_730)
        #expect(PushSettings.placesFor(memoryBytes: 64 << 30) == 100_000)
        #expect(PushSettings.placesFor(memoryBytes: 0) == 1)
    }
}
