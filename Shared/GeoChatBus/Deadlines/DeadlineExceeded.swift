import Synchronization

/// The operation did not finish in the time it had.
public struct DeadlineExceeded: Error, Sendable {}
