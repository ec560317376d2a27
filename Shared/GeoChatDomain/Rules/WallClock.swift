import Foundation

/// Milliseconds since 1970 (UTC): the unit of every timestamp and deadline on the wire.
public enum WallClock {
    public static func nowMs() -> Int64 { milliseconds(Date()) }

    /// Rounded down, as PostgreSQL's `to_char` and the protocol's whole seconds are:
    /// 27.9996 s is 27.999 s, never 28.000 (a timestamp would change its second).
    public static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    public static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

extension Duration {
    /// Whole milliseconds, rounded down.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
