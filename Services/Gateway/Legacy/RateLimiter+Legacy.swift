import GatewayCore
import GeoChatLegacyProtocol

// Which of the limited actions a phone's request is: the legacy surface's own
// mapping onto the core's limits.
extension RateLimiter.Action {
    /// The action a legacy request is, if it is a limited one.
    init?(_ request: LegacyRequest) {
        switch request {
        case .chat(.say(let session, _, _)): self = .say(session: session)
        case .lobbyPost: self = .say(session: nil)
        case .chat(.create(let session, _, _, _)): self = .create(session: session)
        case .chat(.start): self = .start
        case .chat(.join(let session, _)), .chat(.leave(let session, _)), .chat(.nick(let session, _)):
            self = .change(session: session)
        default: return nil
        }
    }
}

extension RateLimiter {
    /// Admits the request (taking its tokens) or says when to come back. The
    /// address is worked out only for the requests limited by address (not a poll).
    func admit(_ request: LegacyRequest, address: @autoclosure () -> String) -> Refusal? {
        guard let action = Action(request) else { return nil }
        return admit(action, address: address())
    }
}
