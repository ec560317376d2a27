import GatewayCore
import GeoChatDomain
import Hummingbird
import Logging

/// The one sequence every chat request goes through, whichever surface it came
/// by (the phones' XML, the JSON API and its push streams): its client (the
/// address and its limits), the sign of life of the session it names, the
/// core's action, the signs settled, the count and time under its name, and an
/// `unavailable` logged. A surface supplies only what differs: how a request
/// is read into a `Call` (its parser), and how an answer and a refusal are
/// written (its renderer). A new legacy command or JSON endpoint touches the
/// parser, the core action and the renderer, never this sequence.
struct ChatRequests: Sendable {
    let actions: ChatActions
    let limiter: RateLimiter
    let clientAddresses: ClientAddresses
    let logger: Logger

    /// A request as its surface read it.
    struct Call<Answer> {
        /// Its name in the request metrics (`say`, `api_say`).
        var name: String
        /// The session it names: a sign of life (an id this gateway never met costs a lookup token).
        var session: SessionID?
        /// The core's action, with the request's client.
        var perform: (ChatClient) async throws(ProtocolError) -> Answer
    }

    /// Serves one request: `read` makes the call (a refusal there is counted as
    /// `unread`), then the sequence above; `answer` and `refusal` write it.
    func serve<Answer>(
        _ request: Request, _ context: GatewayRequestContext, unread: String,
        answer: (Answer) -> Response, refusal: (ProtocolError) -> Response,
        _ read: () async throws(ProtocolError) -> Call<Answer>
    ) async -> Response {
        let started = ContinuousClock.now
        var name = unread
        var client = client(request, context)
        do throws(ProtocolError) {
            let call = try await read()
            name = call.name
            try actions.signOfLife(call.session, client: &client)
            let answered = try await call.perform(client)
            if let mark = actions.pendingMark(of: call.session) { await mark.value }
            return finish(name, request, since: started, .success(answered), answer: answer, refusal: refusal)
        } catch {
            return finish(name, request, since: started, .failure(error), answer: answer, refusal: refusal)
        }
    }

    /// The request's client: its address's buckets (writes and costly reads) and waiting places.
    func client(_ request: Request, _ context: GatewayRequestContext) -> ChatClient {
        ChatClient(limiter: limiter, address: context.clientAddressReader(request, clientAddresses))
    }

    /// The sequence's end, for a path that cannot await (a push stream opened at
    /// once): counted and timed under `name`, an `unavailable` logged, written.
    func finish<Answer>(
        _ name: String, _ request: Request, since started: ContinuousClock.Instant,
        _ outcome: Result<Answer, ProtocolError>, answer: (Answer) -> Response, refusal: (ProtocolError) -> Response
    ) -> Response {
        switch outcome {
        case .success(let answered):
            RequestMetrics.record(name, since: started)
            return answer(answered)
        case .failure(let error):
            RequestMetrics.record(name, since: started, error: error)
            if error.code == .unavailable {
                logger.warning("answered unavailable", metadata: ["path": "\(request.uri.path)"])
            }
            return refusal(error)
        }
    }
}
