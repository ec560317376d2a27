import Dispatch

/// Runs a blocking librdkafka call (metadata, admin, flush: up to seconds while the
/// broker is away) on a Dispatch thread, so it never holds one of the few
/// cooperative threads that serve every request.
func offloaded<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try body() })
        }
    }
}
