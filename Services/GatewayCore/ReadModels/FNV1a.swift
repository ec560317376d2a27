/// 64-bit FNV-1a: cheap, and enough to tell a torn or changed file (it guards
/// against accidents, not against someone who can write the gateway's files).
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ bytes: some Collection<UInt8>) {
        var hash = value
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        value = hash
    }
}
