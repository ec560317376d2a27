import Foundation

extension Date {
    /// Milliseconds since 1970, rounded: how wire values carry `timestamptz` columns.
    public var epochMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
