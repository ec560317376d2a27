import Foundation
import Logging
import Synchronization

/// A record handed to the producer: `wait()` returns once the broker
/// acknowledged it, or throws what went wrong.
public struct RecordDelivery: Sendable {
    private let outcome: @Sendable () async throws -> Void

    public init(_ outcome: @escaping @Sendable () async throws -> Void) { self.outcome = outcome }

    /// A delivery that already ended: delivered (nil) or failed.
    public static func completed(_ error: (any Error)?) -> RecordDelivery {
        RecordDelivery { if let error { throw error } }
    }

    public func wait() async throws { try await outcome() }
}
