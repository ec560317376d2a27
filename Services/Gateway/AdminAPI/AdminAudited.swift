import GatewayCore
import GeoChatDomain
import Hummingbird

/// An operator's change, audited whatever its outcome: `ok` with what it did,
/// `refused` (the owner said no) or `failed` (no answer), each with the
/// operator's reason and the client address it came from.
extension AdminEndpoints {
    /// `change` answers its outcome and what it did, in words, for the audit row.
    func audited<Outcome>(
        _ call: AdminCall, _ action: String, _ target: String, reason: String,
        _ change: () async throws(AdminFailure) -> (Outcome, done: String)
    ) async throws(AdminFailure) -> Outcome {
        let source = clientAddress(call.request, call.context)
        let (outcome, done): (Outcome, String)
        do {
            (outcome, done) = try await change()
        } catch {
            await backend.audit(
                call.name, action, target, error.status == .serviceUnavailable ? "failed" : "refused",
                Self.detail(reason, error.message), source: source)
            throw error
        }
        await backend.audit(call.name, action, target, "ok", Self.detail(reason, done), source: source)
        return outcome
    }

    /// Why, in the operator's words: optional, one line, bounded.
    static func reason(_ text: String?) throws(AdminFailure) -> String {
        guard let text else { return "" }
        guard text.count <= 500, !text.contains(where: \.isNewline) else {
            throw .badRequest("'reason' must be one line of at most 500 characters")
        }
        return text
    }

    static func detail(_ reason: String, _ outcome: String) -> String {
        reason.isEmpty ? outcome : "\(outcome); reason: \(reason)"
    }
}
