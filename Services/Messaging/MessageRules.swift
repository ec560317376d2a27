import GeoChatBus
import GeoChatDomain
import GeoChatKafka

enum MessageRules {
    /// A phone repeats a `say` it got no answer for (a `503`, a cut connection)
    /// within 10 s of that answer: up to three times, a second apart. The answer
    /// comes at most the request deadline (3 s) after the first was stored, and
    /// a repeat may wait up to as long before its own turn: measured from the
    /// first message's commit, 15 s covers them all.
    static let repeatWindow: Duration = .seconds(15)
    static var repeatWindowMs: Int64 { repeatWindow.components.seconds * 1000 }
}
