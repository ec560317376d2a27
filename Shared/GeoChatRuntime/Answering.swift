import Foundation
import GeoChatDomain
import Logging

/// Runs a command's work within the time its requester still waits, and turns
/// the outcome into a reply: protocol errors go back as they are; anything else
/// (PostgreSQL away, a deadline hit) is `unavailable`, so the client may retry.
public func answer<Command>(
    _ envelope: RequestEnvelope<Command>, logger: Logger,
    _ work: @escaping @Sendable () async throws -> ReplyBody
) async -> Result<ReplyBody, ProtocolError> {
    // Leave time for the reply to travel back before the requester gives up.
    let remainingMs = envelope.deadlineMs - Int64(Date().timeIntervalSince1970 * 1000) - 100
    guard remainingMs > 0 else { return .failure(.unavailable) }
    do {
        return .success(try await bounded(by: .milliseconds(remainingMs), work))
    } catch let error as ProtocolError {
        return .failure(error)
    } catch is DeadlineExceeded {
        // The work is still running and may yet commit: do not say "nothing was done".
        logger.warning("command ran out of time", metadata: ["correlation": "\(envelope.correlationID)"])
        return .failure(.outcomeUnknown)
    } catch {
        logger.warning(
            "command failed; answering unavailable",
            metadata: ["correlation": "\(envelope.correlationID)", "error": "\(String(reflecting: error))"])
        return .failure(.unavailable)
    }
}

/// Milliseconds since 1970, the unit every wire timestamp uses.
public func currentTimeMs() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
