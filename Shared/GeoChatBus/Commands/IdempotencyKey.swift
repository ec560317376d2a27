import GeoChatDomain
import GeoChatKafka

public enum IdempotencyKey {
    /// 128 random bits.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next(), radix: 36) + "-" + String(generator.next(), radix: 36)
    }
}
